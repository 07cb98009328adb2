/**
 * The handler's static side: the client app's files, the built-in default
 * page (with the upstream's health), and nginx's `error_page` for the
 * gateway's own errors. Failures come back as data and are logged here,
 * with the request's context, through the handler's `log`.
 *
 * @module
 */

import type { GatewayConfig } from "./config/mod.ts";
import type { Logger } from "./log/mod.ts";
import type { RequestEvent } from "./proxy/mod.ts";
import type { Route } from "./routing/mod.ts";
import {
  errorPageResponse,
  renderDefaultPage,
  serveStatic,
  StaticCache,
} from "./static/mod.ts";
import { isLoopback } from "./status.ts";
import {
  probeHttp,
  type UpstreamGroup,
  UpstreamHealth,
} from "./upstream/mod.ts";

/** How long the default page's probe waits for the upstream's answer. */
const PROBE_TIMEOUT_MS = 3000;

/** The settings the static side reads, under {@linkcode GatewayConfig}'s names. */
export type StaticSettings = Pick<
  GatewayConfig,
  "root" | "errorPages" | "spaFallback" | "logNotFound" | "cachePolicy"
>;

/** What the static side needs besides its settings. */
export interface StaticRouteDeps {
  /** The gateway's version, for the default page. */
  version: string;
  /** The listening port, for the station's address on the default page. */
  port?: number;
  /** The log files' paths, for the default page; none shown when absent. */
  logFiles?: { error: string; access: string | null };
  /**
   * The first proxied upstream group: its first server is probed for the
   * default page; none when the configuration proxies nothing.
   */
  group?: UpstreamGroup;
  /** The last error line, for the default page. */
  logger: Logger;
}

/**
 * The `unexpected error` line for an exception the handler caught: the
 * stack on one line, as every error-log line is.
 *
 * @param error What was thrown.
 * @returns The `[alert]` event.
 */
export function unexpectedError(error: unknown): RequestEvent {
  return {
    level: "alert",
    message: `unexpected error: ${
      error instanceof Error ? error.stack ?? error.message : error
    }`.replaceAll("\n", " "),
  };
}

/** The client app's files, the default page and the error pages. */
export class StaticRoute {
  /** Small files in memory, shared by every request. */
  readonly cache: StaticCache = new StaticCache();
  #config: StaticSettings;
  #deps: StaticRouteDeps;
  #health: UpstreamHealth;

  /**
   * @param config The gateway's settings.
   * @param deps The version, log paths, upstream group and logger.
   */
  constructor(config: StaticSettings, deps: StaticRouteDeps) {
    this.#config = config;
    this.#deps = deps;
    // The default page probes the first primary server, with a real
    // request, shared by every page that asks (at most one probe a second).
    const first = deps.group?.peers[0]?.spec.address;
    this.#health = new UpstreamHealth({
      probe: () =>
        first === undefined
          ? Promise.resolve({ ok: false, reason: "no upstream is configured" })
          : probeHttp({
            hostname: first.hostname,
            port: first.port,
            host: first.origin.slice("http://".length),
            timeoutMs: PROBE_TIMEOUT_MS,
          }),
    });
  }

  /**
   * Serves a static route; a failure nginx would log is logged.
   *
   * @param req The request.
   * @param route The decoded path.
   * @param request The client's address and the request's error log.
   * @returns The response.
   */
  async serve(
    req: Request,
    route: Extract<Route, { kind: "static" }>,
    { client, log }: { client: string; log: (event: RequestEvent) => void },
  ): Promise<Response> {
    const config = this.#config;
    const result = await serveStatic(req, route, {
      root: config.root,
      defaultPage: (r) => this.defaultPage(r, client),
      cache: this.cache,
      spaFallback: config.spaFallback,
      logNotFound: config.logNotFound,
      cachePolicy: config.cachePolicy,
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

  /**
   * The configured page for a built-in error, or the built-in page when the
   * file is missing or something unexpected happens (logged as the
   * handler's own errors are).
   *
   * @param req The request.
   * @param response The gateway's built-in error response.
   * @param log The request's error log.
   * @returns The response to send.
   */
  withErrorPage(
    req: Request,
    response: Response,
    log: (event: RequestEvent) => void,
  ): Response {
    const uri = this.#config.errorPages.get(response.status);
    if (uri === undefined) return response;
    try {
      return errorPageResponse(response, {
        root: this.#config.root,
        uri,
        head: req.method === "HEAD",
        cache: this.cache,
      }) ?? response;
    } catch (error) {
      log(unexpectedError(error));
      return response;
    }
  }

  /**
   * The page shown while the client app is not installed. The log paths
   * and the last error line (other clients' addresses and requests) are
   * for this machine only, as the status endpoint is.
   *
   * @param req The request.
   * @param client The client's address.
   * @returns The page.
   */
  async defaultPage(req: Request, client: string): Promise<Response> {
    const { version, logFiles, group, logger, port } = this.#deps;
    const diagnostics = isLoopback(client);
    const html = renderDefaultPage({
      version,
      ...(port === undefined ? {} : { port }),
      upstream: group?.peers[0]?.spec.address.origin ?? "(none)",
      root: this.#config.root,
      health: await this.#health.check(),
      probeTimeoutMs: PROBE_TIMEOUT_MS,
      diagnostics,
      ...(logFiles && diagnostics ? { logFiles } : {}),
      lastError: diagnostics ? logger.lastError?.() ?? null : null,
      now: Date.now(),
    });
    return new Response(req.method === "HEAD" ? null : html, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
      },
    });
  }
}
