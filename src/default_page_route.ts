/**
 * The gateway's own page while no client app is installed (with the
 * upstream's health), for `station_default_page`. Files and `error_page`
 * are the engine's (`request/`).
 *
 * @module
 */

import { makeResponse } from "./response/mod.ts";
import type { GatewayConfig } from "./config/mod.ts";
import type { Logger } from "./log/mod.ts";
import { renderDefaultPage } from "./static/mod.ts";
import { isLoopback } from "./status.ts";
import {
  probeHttp,
  type UpstreamGroup,
  UpstreamHealth,
} from "./upstream/mod.ts";

/** How long the default page's probe waits for the upstream's answer. */
const PROBE_TIMEOUT_MS = 3000;

/** The settings the page reads, under {@linkcode GatewayConfig}'s names. */
export type DefaultPageSettings = Pick<
  GatewayConfig,
  "root"
>;

/** What the page needs besides its settings. */
export interface DefaultPageDeps {
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

/** The page shown while no client app is installed. */
export class DefaultPageRoute {
  #config: DefaultPageSettings;
  #deps: DefaultPageDeps;
  #health: UpstreamHealth;

  /**
   * @param config The gateway's settings.
   * @param deps The version, log paths, upstream group and logger.
   */
  constructor(config: DefaultPageSettings, deps: DefaultPageDeps) {
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
    return makeResponse(req.method === "HEAD" ? null : html, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
      },
    });
  }
}
