/**
 * The error-log lines of forwarding, shared by every proxied path: each
 * failed attempt's lines as it fails, and the line for how forwarding
 * ended, in nginx's words.
 *
 * @module
 */

import { currentOsFamily, osErrorOf } from "../runtime/mod.ts";
import type { ErrorEvent } from "../log/mod.ts";
import type { AttemptFailure, UpstreamFailureKind } from "../upstream/mod.ts";
import type { AttemptWarning, ProxyResult } from "./proxy_options.ts";

/** An error line's own fields; the request's context is added by the handler. */
export type RequestEvent = Omit<
  ErrorEvent,
  "connection" | "client" | "server" | "request" | "host" | "referrer"
>;

/** Where forwarding counts failures, for the status endpoint. */
export interface FailureCounter {
  /** Counts one failure of this kind. */
  failed(kind: UpstreamFailureKind | "no-live"): void;
}

/**
 * The error-log line for how forwarding ended, after the attempts' own
 * lines: `no live upstreams`, or the client that left while its body was
 * read. The 413's line is written with its response.
 *
 * @param result How forwarding ended.
 * @param context The request's log, the counters, the group's name and the
 * path sent.
 */
export function logOutcome(
  result: ProxyResult,
  { log, stats, group, upstreamPath }: {
    log: (event: RequestEvent) => void;
    stats: FailureCounter;
    group: string;
    upstreamPath: string;
  },
): void {
  switch (result.kind) {
    case "no-live":
      stats.failed("no-live");
      log({
        level: "error",
        message: "no live upstreams",
        action: "connecting to upstream",
        upstream: `http://${group}${upstreamPath}`,
      });
      break;
    case "temp-failed": {
      const osError = osErrorOf(result.error, currentOsFamily());
      log({
        level: "crit",
        message: result.message,
        ...(osError ? { osError } : {}),
      });
      break;
    }
    case "body-not-kept":
      // The gateway's own line (README, known differences): a body
      // streamed to the first upstream is not kept for an internal
      // redirect, an error page's or an X-Accel-Redirect's alike (nginx
      // writes none: it sends the redirected request the length alone).
      log({
        level: "error",
        message: "client request body is not kept for internal redirect",
      });
      break;
    case "bad-body":
      // nginx 1.22 writes this at error level, with no "while" phrase
      // (ngx_http_request_body_chunked_filter).
      log({ level: "error", message: "client sent invalid chunked body" });
      break;
    case "client-left":
      // nginx reads the body before it chooses a server, so its line has no
      // upstream, and no "while" phrase either: the request's log action is
      // cleared once its head is read (ngx_http_process_request), and
      // ngx_http_do_read_client_request_body writes this at info level.
      log({ level: "info", message: "client prematurely closed connection" });
      break;
  }
}

/**
 * The line of bytes an upstream sent beyond its answer's framing, at
 * nginx's level (`ngx_http_proxy_copy_filter`, `ngx_http_proxy_chunked_filter`):
 * not counted as a failure, the answer stands.
 *
 * @param warning nginx's words and the server.
 * @param log The request's error log.
 */
export function logWarning(
  { message, upstream, action }: AttemptWarning,
  log: (event: RequestEvent) => void,
): void {
  log({
    level: "warn",
    message,
    action: action ?? "reading upstream",
    upstream,
  });
}

/**
 * One failed attempt's lines: the failure with the server tried, then
 * nginx's `upstream server temporarily disabled` when it took the server
 * out; counted for the status endpoint unless the client left.
 *
 * @param failure The attempt.
 * @param log The request's error log.
 * @param stats The counters.
 */
export function logAttempt(
  { error, upstream, disabled }: AttemptFailure,
  log: (event: RequestEvent) => void,
  stats: FailureCounter,
): void {
  // A client that left is no failure of the upstream.
  if (error.kind !== "client-closed") stats.failed(error.kind);
  // A streamed body that stalled past client_body_timeout: nginx writes no
  // line (ngx_http_upstream_read_request_handler finalizes with 408).
  if (error.bodyTimedOut) return;
  const fields = { action: error.action, upstream };
  log({
    level: error.level,
    message: error.message,
    ...(error.osError ? { osError: error.osError } : {}),
    ...fields,
  });
  if (disabled) {
    log({
      level: "warn",
      message: "upstream server temporarily disabled",
      ...fields,
    });
  }
}
