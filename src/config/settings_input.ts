/**
 * The settings as given in the config file (`config_file.ts`) or on the
 * command line (`cli.ts`), as text, and their defaults, nginx's where nginx
 * has one; `config.ts` validates them into a `GatewayConfig`.
 *
 * @module
 */

import { DEFAULT_CACHE_POLICY } from "./gateway_config.ts";
import { DEFAULT_ERROR_PAGE } from "./error_pages.ts";

/**
 * Settings as given in the config file or on the command line: each is the
 * `GatewayConfig` field of the same name (documented there), as
 * text; only the syntax is said here.
 */
export interface SettingsInput {
  /** `[host:]port`. */
  listen?: string;
  /** `http://host[:port] [backup] [max_fails=N] [fail_timeout=T]`, one or more (`upstreams`). */
  upstream?: string | string[];
  /** A name: `backend`. */
  upstreamGroup?: string;
  /** A folder, relative to the base folder or absolute. */
  root?: string;
  /** A name without spaces or quotes. */
  serverName?: string;
  /** A file, relative to the base folder or absolute. */
  errorLog?: string;
  /** A file, relative to the base folder or absolute, or `off`. */
  accessLog?: string;
  /** `debug` … `emerg`. */
  errorLogLevel?: string;
  /** `true` or `false`. */
  addForwardedHeaders?: boolean;
  /** A size: `16m`; `0` never rotates (`logMaxBytes`). */
  logMaxSize?: string;
  /** A whole number from 0 to 1000. */
  logKeep?: number;
  /** A duration: `60s` (`timeouts.connectMs`). */
  proxyConnectTimeout?: string;
  /** A duration: `60s` (`timeouts.sendMs`). */
  proxySendTimeout?: string;
  /** A duration: `60s` (`timeouts.readMs`). */
  proxyReadTimeout?: string;
  /** A size from `1k` to `1m`. */
  proxyBufferSize?: string;
  /** A size: `1m`; `0` is unlimited. */
  clientMaxBodySize?: string;
  /** A whole number from 0 to 1024. */
  upstreamKeepalive?: number;
  /** A duration: `60s` (`clientBodyTimeoutMs`). */
  clientBodyTimeout?: string;
  /** A size from `1k` to `64m`. */
  clientBodyBufferSize?: string;
  /** A folder, relative to the base folder or absolute. */
  clientBodyTempPath?: string;
  /** `on` or `off`. */
  proxyRequestBuffering?: string;
  /** A number and a size: `4 8k`. */
  largeClientHeaderBuffers?: string;
  /** `on` or `off`. */
  spaFallback?: string;
  /** `on` or `off`. */
  logNotFound?: string;
  /** `on` or `off`. */
  underscoresInHeaders?: string;
  /** A `Cache-Control` value for HTML documents (`cachePolicy.html`). */
  cacheHtml?: string;
  /** A `Cache-Control` value for fingerprinted assets such as `app.3f9a2c1b.js` (`cachePolicy.fingerprinted`). */
  cacheFingerprinted?: string;
  /** A `Cache-Control` value for other static files (`cachePolicy.other`). */
  cacheOther?: string;
  /** A path such as `/__status`, or `off`. */
  statusPath?: string;
  /** nginx `error_page` lines (`500 502 503 504 /50x.html`), or `off` (`errorPages`). */
  errorPage?: string | string[];
  /** One segment between slashes: `/api/`. */
  apiPrefix?: string;
  /** `true` or `false`. */
  keepApiPrefix?: boolean;
}

/** The defaults, nginx's where nginx has one. */
export const DEFAULT_SETTINGS = {
  listen: "8081",
  upstream: "http://127.0.0.1:8080",
  upstreamGroup: "backend",
  root: "html",
  serverName: "localhost",
  errorLog: "logs/error.log",
  accessLog: "logs/access.log",
  errorLogLevel: "error",
  addForwardedHeaders: false,
  logMaxSize: "16m",
  logKeep: 5,
  proxyConnectTimeout: "60s",
  proxySendTimeout: "60s",
  proxyReadTimeout: "60s",
  // One memory page, as nginx's default on x86 Windows and Linux.
  proxyBufferSize: "4k",
  clientMaxBodySize: "1m",
  upstreamKeepalive: 64,
  spaFallback: "on",
  logNotFound: "on",
  underscoresInHeaders: "off",
  cacheHtml: DEFAULT_CACHE_POLICY.html,
  cacheFingerprinted: DEFAULT_CACHE_POLICY.fingerprinted,
  cacheOther: DEFAULT_CACHE_POLICY.other,
  statusPath: "off",
  errorPage: DEFAULT_ERROR_PAGE,
  apiPrefix: "/api/",
  keepApiPrefix: false,
  clientBodyTimeout: "60s",
  // Two memory pages, nginx's default on x86-64 (Linux and Windows).
  clientBodyBufferSize: "8k",
  clientBodyTempPath: "client_body_temp",
  proxyRequestBuffering: "on",
  largeClientHeaderBuffers: "4 8k",
} as const satisfies Required<SettingsInput>;
