/**
 * The validated settings the gateway runs with ({@linkcode GatewayConfig}),
 * as `resolveConfig` (`config.ts`) makes them from the config file and the
 * flags, and the default `Cache-Control` policy.
 *
 * @module
 */

import type { ListenAddress } from "./addresses.ts";
import type { ErrorPages } from "./error_pages.ts";
import type { HttpConf } from "../engine/mod.ts";
import type { LogLevel } from "../log/mod.ts";
import type { UpstreamServerSpec } from "../upstream/mod.ts";

/**
 * `Cache-Control` values for the three kinds of static file, written into
 * the built-in configuration as a `map` and `add_header`
 * (`nginx_conf/built_in.ts`).
 */
export interface CachePolicy {
  /** HTML documents, e.g. `index.html`: revalidated every time. */
  html: string;
  /** Fingerprinted assets (`app.3f9a2c1b.js`): safe to cache for long. */
  fingerprinted: string;
  /** Everything else. */
  other: string;
}

/** The default policy. */
export const DEFAULT_CACHE_POLICY: CachePolicy = {
  html: "no-cache",
  fingerprinted: "public, max-age=31536000, immutable",
  other: "no-cache",
};

/** The validated settings the gateway runs with. */
export interface GatewayConfig {
  /** Where to listen: the address and port. */
  listen: ListenAddress;
  /** Where `/api/` goes: one server or several with failover. */
  upstreams: UpstreamServerSpec[];
  /** The group name printed in `no live upstreams` lines. */
  upstreamGroup: string;
  /** The client-app folder, absolute. */
  root: string;
  /** The `server:` field of error-log lines. */
  serverName: string;
  /** The error-log path, absolute. */
  errorLog: string;
  /** The access-log path, absolute, or `null` when off. */
  accessLog: string | null;
  /** The least severe error-log level written. */
  errorLogLevel: LogLevel;
  /**
   * Add `X-Forwarded-For` (appended, as nginx's
   * `$proxy_add_x_forwarded_for`), `X-Forwarded-Proto` and
   * `X-Forwarded-Host` upstream. nginx adds none by default.
   */
  addForwardedHeaders: boolean;
  /** Rotate a log before it exceeds this size in bytes; 0 never rotates. */
  logMaxBytes: number;
  /** How many rotated files to keep per log. */
  logKeep: number;
  /**
   * The upstream timers in milliseconds: nginx's `proxy_connect_timeout`,
   * `proxy_send_timeout` (between two writes) and `proxy_read_timeout`
   * (between two reads; also closes a WebSocket tunnel idle this long).
   */
  timeouts: { connectMs: number; sendMs: number; readMs: number };
  /** nginx's `proxy_buffer_size` in bytes: the largest upstream response head. */
  proxyBufferSize: number;
  /**
   * nginx's `client_max_body_size` in bytes; 0 is unlimited. A declared
   * length is checked before routing, a chunked body while it is read.
   */
  clientMaxBodySize: number;
  /**
   * Idle upstream connections kept per server (nginx `keepalive N`); 0
   * opens a new connection per request.
   */
  upstreamKeepalive: number;
  /** App routes without a file get `index.html` (else 404). */
  spaFallback: boolean;
  /** Missing files are logged, as nginx's `log_not_found on`. */
  logNotFound: boolean;
  /**
   * Request fields with `_` in their names are passed on, as nginx's
   * `underscores_in_headers on` (by default nginx drops them).
   */
  underscoresInHeaders: boolean;
  /** `Cache-Control` values for static files: HTML, fingerprinted, other. */
  cachePolicy: CachePolicy;
  /** The status endpoint's path (loopback clients only), or `null` when off. */
  statusPath: string | null;
  /** nginx `error_page`: files for the gateway's own error statuses, by status. */
  errorPages: ErrorPages;
  /** The proxied location's segment (`api` for `/api/`). */
  apiPrefix: string;
  /** Forward the prefix too (`proxy_pass` without a URI part). */
  keepApiPrefix: boolean;
  /**
   * nginx's `client_body_timeout` in milliseconds: the longest wait between
   * two reads of a request body (408).
   */
  clientBodyTimeoutMs: number;
  /**
   * nginx's `client_body_buffer_size` in bytes: a request body up to this
   * is kept in memory, a larger one goes to a file in `clientBodyTempPath`.
   */
  clientBodyBufferSize: number;
  /** nginx's `client_body_temp_path`: the folder for those files, absolute. */
  clientBodyTempPath: string;
  /**
   * nginx's `proxy_request_buffering`: read the whole body before the
   * upstream is contacted (`true`), or stream it as it arrives.
   */
  proxyRequestBuffering: boolean;
  /** nginx's `large_client_header_buffers`: how many, and their size. */
  largeClientHeaderBuffers: { number: number; size: number };
  /**
   * A configuration compiled from an nginx.conf: when set, the engine
   * answers every request from it, and the settings above only name the
   * process's listener, logs and probes.
   */
  engine?: HttpConf;
}
