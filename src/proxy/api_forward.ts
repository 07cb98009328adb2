/**
 * The `/api/` branch of the handler: one request forwarded (or tunnelled,
 * for a WebSocket), every failed attempt logged as nginx logs it, and the
 * outcome turned into the client's response.
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import { errorResponse } from "../static/mod.ts";
import { proxyRequest, type RequestBuffering } from "./proxy.ts";
import { type AttemptFailure, upstreamStatus } from "../upstream/mod.ts";
import { TempFiles } from "./temp_files.ts";
import {
  type FailureCounter,
  logAttempt,
  logOutcome,
  type RequestEvent,
} from "./outcome_log.ts";

export type { FailureCounter, RequestEvent };
import type { UpstreamGroup } from "../upstream/mod.ts";
import { isWebSocketRequest, proxyWebSocket } from "./websocket_proxy.ts";

/** The settings forwarding reads, under {@linkcode GatewayConfig}'s names. */
export type ForwardSettings = Pick<
  GatewayConfig,
  | "addForwardedHeaders"
  | "clientMaxBodySize"
  | "timeouts"
  | "apiPrefix"
  | "keepApiPrefix"
  | "clientBodyTimeoutMs"
  | "clientBodyBufferSize"
  | "clientBodyTempPath"
  | "proxyRequestBuffering"
>;

/** What forwarding needs from the gateway, fixed at start-up. */
export interface ApiForwarder {
  /** The gateway's settings. */
  config: ForwardSettings;
  /** The port the gateway listens on, for `Location` rewriting. */
  port: number;
  /** The upstream servers and their connection pools. */
  group: UpstreamGroup;
  /** Counters for the status endpoint. */
  stats: FailureCounter;
  /** Upgraded responses whose access line waits for the tunnel to close. */
  tunnels: WeakMap<Response, Promise<number>>;
  /**
   * What replaces the upstream's `/` in `Location` (nginx's
   * `proxy_redirect default`): the location's prefix, or `/` when the prefix
   * is forwarded too. Made once, from the settings.
   */
  publicApiPath: string;
  /** The `client_body_temp_path` folder, or `null` when bodies are streamed. */
  temp: TempFiles | null;
  /** Whether the gateway is shutting down. */
  stopping: () => boolean;
}

/**
 * The forwarding state for a gateway's settings.
 *
 * @param config The gateway's settings.
 * @param runtime The bound port, the upstream group and the counters.
 * @returns The forwarder {@linkcode forwardApi} takes.
 */
export function createForwarder(
  config: ForwardSettings,
  runtime: {
    port: number;
    group: UpstreamGroup;
    stats: FailureCounter;
    stopping?: () => boolean;
  },
): ApiForwarder {
  return {
    config,
    stopping: () => false,
    ...runtime,
    tunnels: new WeakMap(),
    publicApiPath: config.keepApiPrefix ? "/" : `/${config.apiPrefix}/`,
    temp: config.proxyRequestBuffering
      ? new TempFiles(config.clientBodyTempPath)
      : null,
  };
}

/** One request's part in forwarding. */
export interface ApiRequest {
  /** The path and query to request upstream. */
  upstreamPath: string;
  /**
   * The name the client reached the gateway by, for absolute redirects: the
   * authority of an absolute-form request line, else `Host`, if sent.
   */
  host: string | null;
  /** The client's address. */
  client: string;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /** The declared `Content-Length`, parsed once by the gateway; `null` if none. */
  contentLength: number | null;
}

/**
 * The origin the client reached the gateway at: the `Host` name with the
 * listening port, as nginx builds absolute redirects.
 *
 * @param host The client's `Host`, or `null`.
 * @param port The port the gateway listens on.
 * @param scheme `https` on a TLS socket (its standard port is 443).
 * @returns e.g. `http://localhost:8081`.
 */
export function publicOrigin(
  host: string | null,
  port: number,
  scheme: "http" | "https" = "http",
): string {
  const colon = host === null ? -1 : host.indexOf(":");
  const name = host === null || host === ""
    ? "127.0.0.1"
    : host.startsWith("[")
    ? host.slice(0, host.indexOf("]") + 1)
    : colon < 0
    ? host
    : host.slice(0, colon);
  const standard = scheme === "https" ? 443 : 80;
  return `${scheme}://${name}${port === standard ? "" : `:${port}`}`;
}

/**
 * nginx's 413: the line has no `while` and no upstream, and the connection
 * closes. `Deno.serve` adds `Connection: close` itself when the body was left
 * unread (a declared `Content-Length` over the limit) and closes once it has
 * discarded that body; when the gateway read part of a chunked body it must
 * say so itself, or the connection stays open.
 *
 * @param message nginx's message, e.g. `client intended to send too large body: 9 bytes`.
 * @param log The request's error log.
 * @param bodyRead Part of the body was read.
 * @returns The 413 response.
 */
export function tooLarge(
  message: string,
  log: (event: RequestEvent) => void,
  bodyRead: boolean,
): Response {
  log({ level: "error", message });
  return errorResponse(
    413,
    bodyRead ? { headers: { connection: "close" } } : {},
  );
}

/**
 * Forwards one `/api/` request and returns the client's response: the
 * upstream's, or nginx's error page for the failure (502, 504, 413, or 499
 * when the client left). Each failed attempt is handed here as data when it
 * fails, and its lines are written then ({@linkcode logAttempt}), so they
 * carry the time of the failure and are not lost if the process stops while
 * a later server is tried; how forwarding ended is written from the result
 * ({@linkcode logOutcome}).
 *
 * @param req The client's request.
 * @param request The request's upstream path, `Host`, address and log.
 * @param forwarder The gateway's forwarding settings.
 * @returns The response.
 * @throws The defect (not an upstream failure) that ended the attempts,
 * once the attempts before it are logged.
 */
export async function forwardApi(
  req: Request,
  request: ApiRequest,
  forwarder: ApiForwarder,
): Promise<Response> {
  const { stats, group } = forwarder;
  const { log, upstreamPath } = request;
  // Each failed attempt's lines are written as it fails.
  const onFailure = (failure: AttemptFailure) =>
    logAttempt(failure, log, stats);
  const common = {
    group,
    upstreamPath,
    clientAddress: request.client,
    publicApiBase: publicOrigin(request.host, forwarder.port) +
      forwarder.publicApiPath,
    addForwardedHeaders: forwarder.config.addForwardedHeaders,
    onFailure,
    clientMaxBodySize: forwarder.config.clientMaxBodySize,
    contentLength: request.contentLength,
  };
  // Only a tunnel needs to report its end (for its access line).
  const tunnel = isWebSocketRequest(req)
    ? Promise.withResolvers<number>()
    : null;
  const result = tunnel
    ? await proxyWebSocket(req, {
      ...common,
      timeouts: forwarder.config.timeouts,
      onClosed: tunnel.resolve,
    })
    : await proxyRequest(req, {
      ...common,
      buffering: buffering(forwarder, log),
    });
  if (tunnel && result.kind === "response" && result.response.status === 101) {
    forwarder.tunnels.set(result.response, tunnel.promise);
  }
  const head = req.method === "HEAD";
  if (result.kind === "client-left" && forwarder.stopping()) {
    // Deno.serve's shutdown ended the body being read: the client did not
    // leave, and must not be sent a 499 (a status only logs ever show).
    // nginx 1.22 closes such a connection without an answer; Deno.serve
    // must answer, so the client learns to retry.
    return errorResponse(503, { head, headers: { connection: "close" } });
  }
  if (result.kind !== "response") {
    logOutcome(result, { log, stats, group: group.name, upstreamPath });
  }
  switch (result.kind) {
    case "response":
      return result.response;
    case "too-large":
      return tooLarge(result.message, log, true);
    case "no-live":
      return errorResponse(502, { head });
    case "bad-body":
      return errorResponse(400, { head, headers: { connection: "close" } });
    case "body-timeout":
      // nginx closes without an answer (ngx_http_finalize_request with 408
      // terminates the request); Deno.serve cannot, so the page is sent.
      return errorResponse(408, { head, headers: { connection: "close" } });
    case "temp-failed":
      return errorResponse(500, { head, headers: { connection: "close" } });
    case "client-left":
    case "failed":
      return errorResponse(upstreamStatus(result.error), { head });
    case "defect":
      throw result.error;
  }
}

/** The request-buffering settings, or `null` when bodies are streamed. */
function buffering(
  forwarder: ApiForwarder,
  log: (event: RequestEvent) => void,
): RequestBuffering | null {
  const { config, temp } = forwarder;
  if (temp === null) return null;
  return {
    bufferSize: config.clientBodyBufferSize,
    timeoutMs: config.clientBodyTimeoutMs,
    temp,
    // nginx's line (ngx_write_chain_to_temp_file via tf->warn), at warn.
    onTempFile: (path) =>
      log({
        level: "warn",
        message:
          `a client request body is buffered to a temporary file ${path}`,
      }),
  };
}
