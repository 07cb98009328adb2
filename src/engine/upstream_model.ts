/**
 * Upstream groups in the configuration model (`model.ts`): an `upstream{}`
 * block or the implicit group of a `proxy_pass host:port`, and its servers
 * with nginx's defaults (`ngx_http_upstream_module`).
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";

/** One server of an `upstream{}` (or the one of a `proxy_pass host:port`). */
export interface UpstreamServerConf {
  /** `host:port` as written. */
  address: string;
  /** The host. */
  hostname: string;
  /** The port. */
  port: number;
  /** `weight=`. */
  weight: number;
  /** `max_fails=`. */
  maxFails: number;
  /** `fail_timeout=` in ms. */
  failTimeoutMs: number;
  /** `backup`. */
  backup: boolean;
  /** `down`. */
  down: boolean;
  /** The address as written (`hash … consistent` hashes it); `address` when absent. */
  server?: string;
}

/**
 * nginx's `server` parameters when none is written (ngx_http_upstream_server:
 * `weight=1 max_fails=1 fail_timeout=10`), for every server the gateway
 * makes: an `upstream{}` line, a `proxy_pass host:port`, a variable's
 * address.
 */
export const SERVER_DEFAULTS: Readonly<
  Pick<
    UpstreamServerConf,
    "weight" | "maxFails" | "failTimeoutMs" | "backup" | "down"
  >
> = {
  weight: 1,
  maxFails: 1,
  failTimeoutMs: 10_000,
  backup: false,
  down: false,
};

/** An `upstream{}` block, or an implicit one. */
export interface UpstreamConf {
  /** The name (`backend`, or `127.0.0.1:8080` for an implicit one). */
  name: string;
  /** Its servers. */
  servers: readonly UpstreamServerConf[];
  /** `keepalive N`: idle connections kept per server; 0 closes each. */
  keepalive: number;
  /** Declared by `upstream{}` rather than made for a `proxy_pass`. */
  explicit: boolean;
  /**
   * `ip_hash`, `least_conn`, `hash KEY` (`hash`), `hash KEY consistent`
   * (`consistent-hash`), or nginx's default weighted round-robin;
   * round-robin when absent.
   */
  balance?:
    | "round-robin"
    | "ip-hash"
    | "least-conn"
    | "hash"
    | "consistent-hash";
  /** The key of `hash`. */
  hashKey?: ComplexValue;
}
