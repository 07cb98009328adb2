/**
 * The request handler: routes `/api/` to the upstream and everything else to
 * the client app, and logs each request as nginx would. It never throws to
 * `Deno.serve`: an unexpected exception becomes a 500 and an `[alert]` line.
 *
 * @module
 */

import {
  type InFlightRegistry,
  PendingAccessLine,
} from "./access_accounting.ts";
import type { ConnectionCounter } from "./log/mod.ts";
import type { GatewayConfig } from "./config/mod.ts";
import {
  createForwarder,
  forwardApi,
  publicOrigin,
  type RequestEvent,
  tooLarge,
} from "./proxy/mod.ts";
import { errorResponse, isBuiltInError } from "./static/mod.ts";
import { isLevelEnabled, type Logger } from "./log/mod.ts";
import { requestTarget, routeRequest } from "./routing/mod.ts";
import {
  absoluteAuthority,
  type CheckEvent,
  checkRequestHead,
  hasUnforwardableBody,
  looksLikeHttp2,
  READING_HEADERS,
  READING_REQUEST_LINE,
  type RejectStatus,
  requestLine,
} from "./routing/mod.ts";
import { GatewayStats, isLoopback, statusDocument } from "./status.ts";
import type { UpstreamGroup } from "./upstream/mod.ts";
import { StaticRoute, unexpectedError } from "./static_route.ts";

/** A `Deno.serve` handler. */
export type GatewayHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Promise<Response>;

/** The settings the handler reads, under {@linkcode GatewayConfig}'s names. */
export type HandlerSettings = Pick<
  GatewayConfig,
  | "root"
  | "serverName"
  | "addForwardedHeaders"
  | "clientMaxBodySize"
  | "timeouts"
  | "statusPath"
  | "errorPages"
  | "apiPrefix"
  | "keepApiPrefix"
  | "spaFallback"
  | "logNotFound"
  | "cachePolicy"
  | "errorLogLevel"
>;

/** What the handler knows only once the gateway runs: no settings. */
export interface GatewayRuntime {
  /** The port bound, for absolute redirects (nginx uses the listen socket's port). */
  port: number;
  /** The gateway's version, for the default page and the status endpoint. */
  version: string;
  /** The log files' paths, for the default page; none shown when absent. */
  logFiles?: { error: string; access: string | null };
  /** Match `/api/` ignoring case. @default {Deno.build.os === "windows"} */
  caseless?: boolean;
}

/** The handler's collaborators. */
export interface GatewayDeps {
  /** Where lines go. */
  logger: Logger;
  /** nginx's `*N` numbers. */
  counter: ConnectionCounter;
  /** The upstream servers and their connection pools. */
  group: UpstreamGroup;
  /** Counters for the status endpoint. */
  stats?: GatewayStats;
  /** Requests whose access line is pending, for shutdown to give up on. */
  inFlight?: InFlightRegistry;
}

/** One request, as the handler's steps see it. */
interface RequestContext {
  /** The client's address. */
  client: string;
  /** The `Host` field, or `null`. */
  host: string | null;
  /** The `Referer` field, or `null`. */
  referrer: string | null;
  /** The request target as received. */
  target: string;
  /** The request came over HTTP/2. */
  http2: boolean;
  /** The request line as logged. */
  request: string;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /** Writes a line about the request line: no header fields, as nginx's. */
  logRequestLine: (event: CheckEvent) => void;
}

const CLOSE = { connection: "close" };
const INVALID_REQUEST_LINE: CheckEvent = {
  level: "info",
  message: "client sent invalid request",
  action: READING_REQUEST_LINE,
};

// Deno.serve gives a GET or HEAD request no body (the fetch Request rules),
// so it cannot be forwarded: refused rather than sent without it.
const BODY_IN_GET = (method: string): CheckEvent => ({
  level: "info",
  message: `client sent body in ${method} request`,
  action: READING_HEADERS,
});

/**
 * Creates the gateway's request handler.
 *
 * @param config The gateway's settings.
 * @param runtime The bound port, the version and the log paths.
 * @param deps Logger, connection counter and upstream group.
 * @returns The handler for `Deno.serve`.
 */
export function createGatewayHandler(
  config: HandlerSettings,
  runtime: GatewayRuntime,
  deps: GatewayDeps,
): GatewayHandler {
  const { logger, group } = deps;
  const stats = deps.stats ?? new GatewayStats();
  // nginx's lines for `_` in field names are `info`: looked for only when
  // that level is written.
  const headChecks = { notes: isLevelEnabled("info", config.errorLogLevel) };
  const statics = new StaticRoute(config, {
    version: runtime.version,
    port: runtime.port,
    ...(runtime.logFiles ? { logFiles: runtime.logFiles } : {}),
    group,
    logger,
  });
  const routeOptions = {
    ...(runtime.caseless === undefined ? {} : { caseless: runtime.caseless }),
    prefix: config.apiPrefix,
    keepPrefix: config.keepApiPrefix,
  };
  const forwarder = createForwarder(config, {
    port: runtime.port,
    group,
    stats,
  });
  const { tunnels } = forwarder;

  return async (req, info) => {
    const ctx = describe(req, info);
    // Opened before the request is handled: shutdown may give up on it.
    const accessLine = logger.accessEnabled
      ? new PendingAccessLine(req, logger, ctx, deps.inFlight)
      : null;

    let response: Response;
    stats.requests++;
    stats.inFlight++;
    try {
      response = await handle(req, ctx);
    } catch (error) {
      ctx.log(unexpectedError(error));
      response = errorResponse(500);
    }
    if (config.errorPages.size > 0 && isBuiltInError(response)) {
      response = statics.withErrorPage(req, response, ctx.log);
    }

    stats.inFlight--;
    stats.answered(response.status);
    // The rest serves only the access log: with it off, nothing to compute,
    // and bodies keep Deno.serve's native path (no counting wrap).
    if (accessLine === null) return response;
    return accessLine.settle(
      req,
      response,
      info.completed,
      tunnels.get(response),
    );
  };

  /** What the handler's steps need to know of a request, read once. */
  function describe(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ): RequestContext {
    // Read once: each read of `info.remoteAddr` is a call into Deno and a
    // new object.
    const peer = info.remoteAddr;
    const client = peer.hostname;
    const connection = deps.counter.forPeer(client, peer.port);
    const host = req.headers.get("host");
    const referrer = req.headers.get("referer");
    const target = requestTarget(req.url, host);
    const http2 = looksLikeHttp2(req.url, host, runtime.port);
    const request = requestLine(req, { host, target, http2 });
    return {
      client,
      host,
      referrer,
      target,
      http2,
      request,
      // The line's context is assembled only when a line is written.
      log: (event) =>
        logger.error({
          connection,
          client,
          server: config.serverName,
          request,
          ...(host === null ? {} : { host }),
          ...(referrer === null ? {} : { referrer }),
          ...event,
        }),
      // A line about the request line has no header fields, as nginx's.
      logRequestLine: (event) =>
        logger.error({
          connection,
          client,
          server: config.serverName,
          request,
          ...event,
        }),
    };
  }

  // Not async: the proxy branch hands back forwardApi's promise, so a
  // request costs one async layer fewer; a throw here still reaches the
  // handler's catch through its await.
  function handle(
    req: Request,
    ctx: RequestContext,
  ): Response | Promise<Response> {
    const { target, host, client, http2, log, logRequestLine } = ctx;
    const head = req.method === "HEAD";
    // nginx answers 400 and closes the connection on every request it
    // cannot read (ngx_http_special_response_handler drops keepalive).
    // Deno.serve may add its own field while a body is unread; a repeated
    // `close` is still one token (RFC 9110 §5.3).
    const badRequest = (status: RejectStatus = 400) =>
      errorResponse(status, { head, headers: CLOSE });
    if (http2 || req.method === "CONNECT") {
      // nginx without `http2` on the listen reads the HTTP/2 preface as a
      // request line and refuses it; Deno.serve has already spoken HTTP/2,
      // so each stream is refused (Connection is not an HTTP/2 field).
      // nginx 1.22 reads a CONNECT line as invalid too.
      logRequestLine(INVALID_REQUEST_LINE);
      return http2 ? errorResponse(400, { head }) : badRequest();
    }
    const route = routeRequest(target, routeOptions);
    if (route.kind === "invalid") {
      // `..` above the root, `%00`, a bad escape: nginx's request-line error.
      logRequestLine(INVALID_REQUEST_LINE);
      return badRequest();
    }
    const verdict = checkRequestHead(req, host, headChecks);
    for (const note of verdict.notes) log(note);
    if (verdict.kind === "reject") {
      log(verdict.event);
      return badRequest(verdict.status);
    }
    if (
      config.statusPath !== null && isLoopback(client) &&
      target.split("?")[0] === config.statusPath
    ) {
      return Response.json(
        statusDocument({
          version: runtime.version,
          stats,
          group,
          connections: deps.counter.size,
          staticCacheBytes: statics.cache.totalBytes,
          memory: Deno.memoryUsage(),
        }),
        { headers: { "cache-control": "no-store" } },
      );
    }
    const length = verdict.contentLength;
    if (
      config.clientMaxBodySize > 0 && length.kind === "length" &&
      length.length > config.clientMaxBodySize
    ) {
      // nginx checks client_max_body_size for every location, before the
      // body is read (no 100 Continue is sent).
      return tooLarge(
        `client intended to send too large body: ${length.digits} bytes`,
        log,
        false,
      );
    }
    switch (route.kind) {
      case "redirect":
        return errorResponse(301, {
          head,
          headers: {
            location: publicOrigin(
              absoluteAuthority(req.url, host, target) ?? host,
              runtime.port,
            ) + route.location,
          },
        });
      case "proxy":
        if (hasUnforwardableBody(req, length)) {
          log(BODY_IN_GET(req.method));
          return badRequest();
        }
        return forwardApi(
          req,
          {
            upstreamPath: route.upstreamPath,
            host: absoluteAuthority(req.url, host, target) ?? host,
            client,
            log,
            contentLength: length.kind === "length" ? length.length : null,
          },
          forwarder,
        );
      case "static":
        return statics.serve(req, route, { client, log });
    }
  }
}
