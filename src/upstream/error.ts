/**
 * Every failure of the upstream leg is one {@linkcode UpstreamError}, made
 * here, and {@linkcode upstreamStatus} is the one place that maps it to the
 * client's status, as nginx's `ngx_http_upstream_next` and Caddy's
 * `statusError` do. The OS code is read from Deno's `(os error N)` here and
 * nowhere else; the text printed comes from our own English table.
 *
 * @module
 */

import type { LogLevel } from "../log/mod.ts";
import type { OsErrorText } from "../runtime/mod.ts";
import {
  currentOsFamily,
  osErrorCode,
  osErrorKind,
  osErrorText,
  type OsFamily,
  parseOsErrorCode,
} from "../runtime/mod.ts";

/** nginx's upstream phases, printed after `while` (`ngx_http_upstream.c`). */
export type UpstreamAction =
  | "connecting to upstream"
  | "sending request to upstream"
  | "reading response header from upstream"
  | "reading upstream"
  | "proxying upgraded connection";

/** What went wrong, independent of platform. */
export type UpstreamFailureKind =
  | "refused"
  | "connect-failed"
  | "timed-out"
  | "reset"
  | "premature-close"
  | "invalid-response"
  | "not-resolved"
  | "client-closed"
  | "unknown";

/** An upstream failure with everything needed to log it as nginx does. */
export class UpstreamError extends Error {
  /** What went wrong. */
  readonly kind: UpstreamFailureKind;
  /** The phase, printed after `while`. */
  readonly action: UpstreamAction;
  /** The OS error to print, if nginx prints one for this failure. */
  readonly osError: OsErrorText | undefined;
  /** The level nginx logs it at. */
  readonly level: LogLevel;
  /**
   * It happened on a pooled connection before any response byte came: the
   * upstream had closed it while idle, so the request was not processed
   * and an idempotent one may be sent again on a new connection.
   */
  stale = false;
  /**
   * The client left while its body was still being streamed upstream
   * (see {@linkcode UpstreamError.clientBodyClosed}): 400, not 499.
   */
  bodyCut = false;
  /**
   * `client_body_timeout` passed while the body was being streamed
   * upstream (see {@linkcode UpstreamError.clientBodyTimedOut}): 408.
   */
  bodyTimedOut = false;
  /**
   * The client's body bytes read before its reading failed, when the
   * reader counted them (`$request_length`, and `$content_length` of a
   * body without a declared length); `null` when it did not.
   */
  bodyReceived: number | null = null;

  /**
   * Creates the error.
   *
   * @param message The nginx message text, e.g. `connect() failed`.
   * @param init The failure's parts.
   */
  constructor(
    message: string,
    init: {
      kind: UpstreamFailureKind;
      action: UpstreamAction;
      osError?: OsErrorText;
      level?: LogLevel;
      cause?: unknown;
    },
  ) {
    super(message, { cause: init.cause });
    this.name = "UpstreamError";
    this.kind = init.kind;
    this.action = init.action;
    this.osError = init.osError;
    this.level = init.level ?? "error";
  }

  /**
   * The client went away: nginx logs "client prematurely closed connection,
   * so upstream connection is closed too" at `info` and records 499
   * (`ngx_http_upstream_check_broken_connection()`).
   *
   * @param cause What was thrown, if anything.
   * @param received The body bytes read before, when counted.
   * @returns The error.
   */
  static clientClosed(cause?: unknown, received?: number): UpstreamError {
    const error = new UpstreamError(
      "client prematurely closed connection, so upstream connection is closed too",
      {
        kind: "client-closed",
        action: "sending request to upstream",
        level: "info",
        cause,
      },
    );
    if (received !== undefined) error.bodyReceived = received;
    return error;
  }

  /**
   * The client went away while its body was being streamed upstream
   * (`proxy_request_buffering off`): nginx's reader of the body sees the
   * close first and finalizes the request with 400, its line at `info`
   * without the words of a broken connection
   * (`ngx_http_read_unbuffered_request_body` →
   * `ngx_http_do_read_client_request_body`).
   *
   * @param cause What was thrown, if anything.
   * @param received The body bytes read before, when counted.
   * @returns The error.
   */
  static clientBodyClosed(cause?: unknown, received?: number): UpstreamError {
    const error = new UpstreamError("client prematurely closed connection", {
      kind: "client-closed",
      action: "sending request to upstream",
      level: "info",
      cause,
    });
    error.bodyCut = true;
    if (received !== undefined) error.bodyReceived = received;
    return error;
  }

  /**
   * `client_body_timeout` passed between two reads of a body being
   * streamed upstream (`proxy_request_buffering off`): nginx's client read
   * handler finalizes the request with 408 and closes the upstream
   * connection, and writes no line for it
   * (ngx_http_upstream_read_request_handler). Not the server's failure:
   * no next server is tried, none is marked failed.
   *
   * @param cause What the cancelled read threw, if anything.
   * @param received The body bytes read before it, when counted.
   * @returns The error.
   */
  static clientBodyTimedOut(cause?: unknown, received?: number): UpstreamError {
    const error = new UpstreamError("client timed out", {
      kind: "client-closed",
      action: "sending request to upstream",
      level: "info",
      cause,
    });
    error.bodyTimedOut = true;
    if (received !== undefined) error.bodyReceived = received;
    return error;
  }
}

function os(code: number, family: OsFamily): OsErrorText {
  return { code, text: osErrorText(code, family) };
}

/**
 * The gateway's own timer fired. nginx prints `ETIMEDOUT` with it, which is
 * `WSAETIMEDOUT` (10060) on Windows (`src/os/win32/ngx_errno.h`).
 *
 * @param action The phase that took too long.
 * @param family Whose code to print.
 * @returns The error (504 before the head, a cut connection after).
 *
 * @example Usage
 * ```ts
 * import { upstreamTimeout } from "./error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const e = upstreamTimeout("connecting to upstream", "linux");
 * strictEqual(`${e.message} (${e.osError?.code}: ${e.osError?.text})`, "upstream timed out (110: Connection timed out)");
 * ```
 */
export function upstreamTimeout(
  action: UpstreamAction,
  family: OsFamily = currentOsFamily(),
): UpstreamError {
  return new UpstreamError("upstream timed out", {
    kind: "timed-out",
    action,
    osError: os(osErrorCode("timed-out", family), family),
  });
}

/** The system call nginx names for a failed operation in a phase. */
function callName(
  action: UpstreamAction,
  code: number | undefined,
  family: OsFamily,
): string {
  if (action === "connecting to upstream") return "connect()";
  const windows = family === "windows";
  if (action === "sending request to upstream") {
    if (windows) return "WSASend()";
    return code === 32 ? "writev()" : "send()";
  }
  return windows ? "WSARecv()" : "recv()";
}

/**
 * Turns an OS-level failure of `Deno.connect`, `read` or `write` in a phase
 * into an {@linkcode UpstreamError} worded as nginx words it.
 *
 * @param error What Deno threw.
 * @param action The phase it happened in.
 * @param family Whose numbering the code uses.
 * @param context The upstream host, for resolver failures.
 * @returns The error.
 *
 * @example The interface spec's case on Windows
 * ```ts
 * import { upstreamErrorFromOs } from "./error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const thrown = new Error("目标计算机积极拒绝 (os error 10061)");
 * const e = upstreamErrorFromOs(thrown, "connecting to upstream", "windows");
 * strictEqual(
 *   `${e.message} (${e.osError?.code}: ${e.osError?.text}) while ${e.action}`,
 *   "connect() failed (10061: No connection could be made because the target machine actively refused it) while connecting to upstream",
 * );
 * ```
 */
export function upstreamErrorFromOs(
  error: unknown,
  action: UpstreamAction,
  family: OsFamily = currentOsFamily(),
  context: { upstreamHost?: string } = {},
): UpstreamError {
  const detail = error instanceof Error ? error.message : String(error);
  const code = parseOsErrorCode(detail);
  if (
    action === "connecting to upstream" &&
    (/lookup|resolve|dns|name or service|no such host|nodename/i.test(detail) ||
      (code !== undefined && osErrorKind(code, family) === "other" &&
        family === "windows" && code === 11001))
  ) {
    // nginx's resolver wording (ngx_resolver.c).
    return new UpstreamError(
      `${context.upstreamHost ?? "upstream"} could not be resolved`,
      {
        kind: "not-resolved",
        action,
        osError: { code: 3, text: "Host not found" },
        cause: error,
      },
    );
  }
  if (code === undefined) {
    return new UpstreamError(`upstream connection failed: ${detail}`, {
      kind: "unknown",
      action,
      cause: error,
    });
  }
  const kind = osErrorKind(code, family);
  return new UpstreamError(`${callName(action, code, family)} failed`, {
    kind: action === "connecting to upstream"
      ? (kind === "refused" ? "refused" : "connect-failed")
      : (kind === "reset" || kind === "aborted" ? "reset" : "unknown"),
    action,
    osError: os(code, family),
    cause: error,
  });
}

/**
 * The status the client gets: 504 for the gateway's own timers, 499 (logged
 * only; nobody is left to read it) when the client left, 400 when it left
 * in the middle of its streamed body, 408 when that body stalled past
 * `client_body_timeout`, 502 for the rest.
 * An OS-level connect timeout (Windows gives up a SYN after ≈21 s) is an
 * error, not nginx's timer, so it is a 502 as in nginx.
 *
 * @param error The failure.
 * @returns The HTTP status.
 *
 * @example Usage
 * ```ts
 * import { upstreamStatus, upstreamTimeout } from "./error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(upstreamStatus(upstreamTimeout("reading response header from upstream")), 504);
 * ```
 */
export function upstreamStatus(
  error: UpstreamError,
): 400 | 408 | 499 | 502 | 504 {
  if (error.kind === "client-closed") {
    return error.bodyTimedOut ? 408 : error.bodyCut ? 400 : 499;
  }
  if (error.kind === "timed-out") return 504;
  return 502;
}
