/**
 * The request handler: routes `/api/` to the upstream and everything else to
 * the client app, and logs each request as nginx would. It never throws to
 * `Deno.serve`: an unexpected exception becomes a 500 and an `[alert]` line.
 *
 * @module
 */

import { basicAuthUser } from "./access_log.ts";
import type { ConnectionCounter } from "./connection_counter.ts";
import { probeUpstream, renderDefaultPage } from "./default_page.ts";
import type { CachePolicy } from "./content_negotiation.ts";
import {
  type ApiForwarder,
  forwardApi,
  publicOrigin,
  type RequestEvent,
  tooLarge,
} from "./api_forward.ts";
import { errorResponse } from "./error_pages.ts";
import type { Logger } from "./logger.ts";
import { requestTarget, type Route, routeRequest } from "./path_rewrite.ts";
import { StaticCache } from "./static_cache.ts";
import { GatewayStats, isLoopback, statusDocument } from "./status.ts";
import { serveStatic } from "./static_handler.ts";
import type { UpstreamGroup } from "./upstream_group.ts";

/** A `Deno.serve` handler. */
export type GatewayHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Promise<Response>;

/** What the handler needs to know. */
export interface GatewayOptions {
  /** The client-app folder, absolute. */
  root: string;
  /** The `server:` field. */
  serverName: string;
  /** The port the gateway listens on, for absolute redirects (nginx uses the listen socket's port). */
  publicPort: number;
  /** Add `X-Forwarded-*` upstream. */
  addForwardedHeaders: boolean;
  /** nginx's `client_max_body_size` in bytes; 0 is unlimited. */
  maxBodySize: number;
  /** Close a WebSocket tunnel idle this long (nginx's `proxy_read_timeout`). */
  tunnelIdleTimeoutMs?: number;
  /** The status endpoint's path (loopback clients only); none when absent. */
  statusPath?: string;
  /** The gateway's version, for the default page. */
  version: string;
  /** Match `/api/` ignoring case (nginx for Windows does). */
  caseless?: boolean;
  /** The proxied prefix's segment (`api` for `/api/`). @default {"api"} */
  apiPrefix?: string;
  /** Forward the prefix too (`proxy_pass` without a URI part). @default {false} */
  keepApiPrefix?: boolean;
  /** App routes without a file get `index.html`. @default {true} */
  spaFallback?: boolean;
  /** Missing files are logged. @default {true} */
  logNotFound?: boolean;
  /** `Cache-Control` values for static files. */
  cachePolicy?: CachePolicy;
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
}

// A Host is a reg-name, IPv4 or bracketed IPv6 with an optional port (RFC
// 3986 §3.2.2); nginx rejects others with 400 (ngx_http_validate_host). This
// also keeps a Host such as "a/b" from shifting the path in `req.url`.
const VALID_HOST =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::\d*)?$/;

/** Counts body bytes as they reach the client, for `$body_bytes_sent`. */
function countingBody(
  body: ReadableStream<Uint8Array>,
  onChunk: (n: number) => void,
): ReadableStream<Uint8Array> {
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        onChunk(chunk.byteLength);
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * Creates the gateway's request handler.
 *
 * @param options Routing and proxy settings.
 * @param deps Logger and connection counter.
 * @returns The handler for `Deno.serve`.
 */
export function createGatewayHandler(
  options: GatewayOptions,
  deps: GatewayDeps,
): GatewayHandler {
  const { logger, group } = deps;
  const staticCache = new StaticCache();
  const stats = deps.stats ?? new GatewayStats();
  // The default page probes the first primary server.
  const first = group.peers[0]!.spec.address;
  const defaultPage = async (req: Request) => {
    const html = renderDefaultPage({
      version: options.version,
      upstream: first.origin,
      root: options.root,
      probe: await probeUpstream(first.hostname, first.port, 3000),
    });
    return new Response(req.method === "HEAD" ? null : html, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
      },
    });
  };

  const routeOptions = {
    ...(options.caseless === undefined ? {} : { caseless: options.caseless }),
    ...(options.apiPrefix === undefined ? {} : { prefix: options.apiPrefix }),
    keepPrefix: options.keepApiPrefix ?? false,
  };
  // Upgraded responses whose access line waits for the tunnel to close.
  const tunnels = new WeakMap<Response, Promise<number>>();
  const forwarder: ApiForwarder = {
    group,
    stats,
    publicPort: options.publicPort,
    addForwardedHeaders: options.addForwardedHeaders,
    maxBodySize: options.maxBodySize,
    tunnelIdleTimeoutMs: options.tunnelIdleTimeoutMs ?? 60_000,
    tunnels,
    // proxy_redirect default: the upstream's "/" becomes the location's
    // prefix, or stays "/" when the prefix is forwarded too.
    publicApiPath: options.keepApiPrefix
      ? "/"
      : `/${options.apiPrefix ?? "api"}/`,
  };

  return async (req, info) => {
    // Read once: each read of `info.remoteAddr` is a call into Deno and a
    // new object.
    const peer = info.remoteAddr;
    const client = peer.hostname;
    const connection = deps.counter.forPeer(client, peer.port);
    const host = req.headers.get("host");
    const referrer = req.headers.get("referer");
    const target = requestTarget(req.url, host);
    const request = `${req.method} ${target} HTTP/1.1`;
    // The line's context is assembled only when a line is written.
    const log = (event: RequestEvent) =>
      logger.error({
        connection,
        client,
        server: options.serverName,
        request,
        ...(host === null ? {} : { host }),
        ...(referrer === null ? {} : { referrer }),
        ...event,
      });

    let response: Response;
    stats.requests++;
    stats.inFlight++;
    try {
      response = await handle(req, { target, host, client, log });
    } catch (error) {
      log({
        level: "alert",
        message: `unexpected error: ${
          error instanceof Error ? error.stack ?? error.message : error
        }`.replaceAll("\n", " "),
      });
      response = errorResponse(500);
    }

    stats.inFlight--;
    stats.answered(response.status);
    // Everything below serves only the access log: with it off, nothing to
    // compute, and bodies keep Deno.serve's native path (no counting wrap).
    if (!logger.accessEnabled) return response;
    const tunnel = tunnels.get(response);
    let sent = 0;
    const length = response.headers.get("content-length");
    // Read response.body only when there is no length: the getter turns a
    // byte body into a stream, which takes Deno.serve off its fast path
    // (measured: about a quarter of the throughput for small answers).
    if (length !== null) {
      sent = req.method === "HEAD" || response.status === 304
        ? 0
        : Number(length);
    } else if (response.body === null) {
      sent = 0;
    } else {
      response = new Response(
        countingBody(response.body, (n) => sent += n),
        response,
      );
    }
    const status = response.status;
    const remoteUser = basicAuthUser(req.headers.get("authorization"));
    const userAgent = req.headers.get("user-agent");
    const accessLine = () =>
      logger.access({
        remoteAddr: client,
        ...(remoteUser === undefined ? {} : { remoteUser }),
        request,
        status,
        bodyBytesSent: status === 499 ? 0 : sent,
        ...(referrer === null ? {} : { referrer }),
        ...(userAgent === null ? {} : { userAgent }),
      });
    if (tunnel) {
      // nginx writes the line when the tunnel closes: 101 and the bytes relayed.
      tunnel.then((bytes) => {
        sent = bytes;
        accessLine();
      });
    } else {
      info.completed.then(accessLine, accessLine);
    }
    return response;
  };

  // Not async: the proxy branch hands back forwardApi's promise, so a
  // request costs one async layer fewer; a throw here still reaches the
  // handler's catch through its await.
  function handle(
    req: Request,
    { target, host, client, log }: {
      target: string;
      host: string | null;
      client: string;
      log: (event: RequestEvent) => void;
    },
  ): Response | Promise<Response> {
    const head = req.method === "HEAD";
    if (host !== null && !VALID_HOST.test(host)) {
      log({ level: "info", message: "client sent invalid host header" });
      return errorResponse(400, { head });
    }
    if (
      options.statusPath !== undefined && isLoopback(client) &&
      target.split("?")[0] === options.statusPath
    ) {
      return Response.json(
        statusDocument({
          version: options.version,
          stats,
          group,
          connections: deps.counter.size,
          staticCacheBytes: staticCache.totalBytes,
          memory: Deno.memoryUsage(),
        }),
        { headers: { "cache-control": "no-store" } },
      );
    }
    const declared = Number(req.headers.get("content-length") ?? 0);
    if (options.maxBodySize > 0 && declared > options.maxBodySize) {
      // nginx checks client_max_body_size for every location, before the
      // body is read (no 100 Continue is sent).
      return tooLarge(
        `client intended to send too large body: ${declared} bytes`,
        log,
        false,
      );
    }
    const route = routeRequest(target, routeOptions);
    switch (route.kind) {
      case "invalid":
        log({
          level: "info",
          message: `client sent invalid request: ${route.reason}`,
        });
        return errorResponse(400, { head });
      case "redirect":
        return errorResponse(301, {
          head,
          headers: {
            location: publicOrigin(host, options.publicPort) + route.location,
          },
        });
      case "proxy":
        return forwardApi(
          req,
          { upstreamPath: route.upstreamPath, host, client, log },
          forwarder,
        );
      case "static":
        return serveStaticRoute(req, route, log);
    }
  }

  async function serveStaticRoute(
    req: Request,
    route: Extract<Route, { kind: "static" }>,
    log: (event: RequestEvent) => void,
  ): Promise<Response> {
    const result = await serveStatic(req, route, {
      root: options.root,
      defaultPage,
      cache: staticCache,
      spaFallback: options.spaFallback ?? true,
      logNotFound: options.logNotFound ?? true,
      ...(options.cachePolicy ? { cachePolicy: options.cachePolicy } : {}),
    });
    if (result.failure) {
      log({
        level: result.failure.level,
        message: result.failure.message,
        ...(result.failure.osError ? { osError: result.failure.osError } : {}),
      });
    }
    return result.response;
  }
}
