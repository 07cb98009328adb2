/**
 * The gateway's settings: their defaults, and merging the config file
 * (`config_file.ts`) and the flags into one validated
 * {@linkcode GatewayConfig}; each value is parsed by `addresses.ts` or
 * `config_values.ts`.
 * Errors are thrown by meaning (`TypeError` for a wrong shape, `RangeError`
 * for a value out of range) with the std message style, naming the value.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import {
  type ListenAddress,
  parseGroupName,
  parseListen,
  parseUpstreamServer,
} from "./addresses.ts";
import type { UpstreamServerSpec } from "../upstream/mod.ts";
import {
  parseDuration,
  parseHeaderValue,
  parseLevel,
  parsePath,
  parseSize,
  parseStatusPath,
  parseSwitch,
} from "./config_values.ts";
import type { LogLevel } from "../log/mod.ts";
import type { HttpConf } from "../engine/mod.ts";
import {
  DEFAULT_ERROR_PAGE,
  type ErrorPages,
  parseErrorPages,
} from "./error_pages.ts";
import {
  MAX_CLIENT_BODY_BUFFER_SIZE,
  MAX_HEADER_BUFFER_SIZE,
  MAX_HEADER_BUFFERS,
  MAX_PROXY_BUFFER_SIZE,
  MAX_UPSTREAM_KEEPALIVE,
  sizeText,
} from "./bounds.ts";

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

/**
 * Settings as given in the config file or on the command line: each is the
 * {@linkcode GatewayConfig} field of the same name (documented there), as
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

function upstreamList(value: string | readonly string[]): UpstreamServerSpec[] {
  const list = typeof value === "string" ? [value] : [...value];
  if (list.length === 0) {
    throw new TypeError("Cannot parse upstream: at least one is needed");
  }
  const specs = list.map(parseUpstreamServer);
  if (specs.every((s) => s.backup)) {
    throw new TypeError(
      `Cannot parse upstream "${
        list[0]
      }": every upstream is a backup, at least one must not be`,
    );
  }
  return specs;
}

/** A head buffer holds at least a status line and at most what is sane. */
function bufferSize(value: string): number {
  const size = parseSize(value, "proxy-buffer-size");
  if (size < 1024 || size > MAX_PROXY_BUFFER_SIZE) {
    throw new TypeError(
      `Cannot parse proxy-buffer-size "${value}": expected a size from 1k to ${
        sizeText(MAX_PROXY_BUFFER_SIZE)
      }`,
    );
  }
  return size;
}

/** A body buffer from 1k to the bound: memory is bounded per request. */
function bodyBufferSize(value: string): number {
  const size = parseSize(value, "client-body-buffer-size");
  if (size < 1024 || size > MAX_CLIENT_BODY_BUFFER_SIZE) {
    throw new TypeError(
      `Cannot parse client-body-buffer-size "${value}": expected a size from 1k to ${
        sizeText(MAX_CLIENT_BODY_BUFFER_SIZE)
      }`,
    );
  }
  return size;
}

/** `N SIZE`: at least one buffer, each from 1k to the bound (a line's limit). */
function headerBuffers(value: string): { number: number; size: number } {
  const m = value.trim().match(/^(\d{1,4})\s+(\S+)$/);
  const number = Number(m?.[1]);
  const size = m ? parseSize(m[2]!, "large-client-header-buffers") : 0;
  if (
    !m || number < 1 || number > MAX_HEADER_BUFFERS || size < 1024 ||
    size > MAX_HEADER_BUFFER_SIZE
  ) {
    throw new TypeError(
      `Cannot parse large-client-header-buffers "${value}": expected a number from 1 to ${MAX_HEADER_BUFFERS} and a size from 1k to ${
        sizeText(MAX_HEADER_BUFFER_SIZE)
      }, like "4 8k"`,
    );
  }
  return { number, size };
}

function apiSegment(value: string): string {
  const m = value.match(/^\/([A-Za-z0-9._~-]+)\/$/);
  if (!m?.[1] || m[1] === "." || m[1] === "..") {
    throw new TypeError(
      `Cannot parse api-prefix "${value}": expected one path segment like /api/`,
    );
  }
  return m[1];
}

function absolute(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/**
 * Merges defaults, the config file and the flags (flags win), validates
 * every value, and resolves relative paths against `baseDir` (the
 * executable's folder when compiled: a scheduled task starts in System32).
 *
 * @param file Settings from the config file.
 * @param flags Settings from the command line.
 * @param baseDir The folder relative paths start from.
 * @returns The validated configuration.
 * @throws {TypeError | RangeError} On the first invalid value.
 *
 * @example Usage
 * ```ts
 * import { resolveConfig } from "./config.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const config = resolveConfig({ listen: "9000" }, { listen: "9001" }, "/opt/gw");
 * strictEqual(config.listen.port, 9001);
 * strictEqual(config.errorLog, "/opt/gw/logs/error.log");
 * ```
 */
export function resolveConfig(
  file: SettingsInput,
  flags: SettingsInput,
  baseDir: string,
): GatewayConfig {
  const s = { ...DEFAULT_SETTINGS, ...file, ...flags };
  if (!Number.isInteger(s.logKeep) || s.logKeep < 0 || s.logKeep > 1000) {
    throw new RangeError(
      `Cannot parse log-keep "${s.logKeep}": expected a whole number from 0 to 1000`,
    );
  }
  if (
    !Number.isInteger(s.upstreamKeepalive) || s.upstreamKeepalive < 0 ||
    s.upstreamKeepalive > MAX_UPSTREAM_KEEPALIVE
  ) {
    throw new RangeError(
      `Cannot parse upstream-keepalive "${s.upstreamKeepalive}": expected a whole number from 0 to ${MAX_UPSTREAM_KEEPALIVE}`,
    );
  }
  // nginx's blanks are space, tab, CR and LF (ngx_conf_read_token): a
  // no-break space typed into a file's `server_name` is part of the name.
  if (s.serverName === "" || /[ \t\r\n"]/.test(s.serverName)) {
    throw new TypeError(
      `Cannot parse server-name "${s.serverName}": expected a name without spaces or quotes`,
    );
  }
  return {
    listen: parseListen(s.listen),
    upstreams: upstreamList(s.upstream),
    upstreamGroup: parseGroupName(s.upstreamGroup),
    root: absolute(baseDir, parsePath(s.root, "root")),
    serverName: s.serverName,
    errorLog: absolute(baseDir, parsePath(s.errorLog, "error-log")),
    accessLog: s.accessLog === "off"
      ? null
      : absolute(baseDir, parsePath(s.accessLog, "access-log")),
    errorLogLevel: parseLevel(s.errorLogLevel),
    addForwardedHeaders: s.addForwardedHeaders,
    logMaxBytes: parseSize(s.logMaxSize, "log-max-size"),
    logKeep: s.logKeep,
    timeouts: {
      connectMs: parseDuration(s.proxyConnectTimeout, "proxy-connect-timeout"),
      sendMs: parseDuration(s.proxySendTimeout, "proxy-send-timeout"),
      readMs: parseDuration(s.proxyReadTimeout, "proxy-read-timeout"),
    },
    proxyBufferSize: bufferSize(s.proxyBufferSize),
    clientMaxBodySize: parseSize(s.clientMaxBodySize, "client-max-body-size"),
    upstreamKeepalive: s.upstreamKeepalive,
    statusPath: parseStatusPath(s.statusPath),
    errorPages: parseErrorPages(
      typeof s.errorPage === "string" ? [s.errorPage] : s.errorPage,
    ),
    apiPrefix: apiSegment(s.apiPrefix),
    keepApiPrefix: s.keepApiPrefix,
    clientBodyTimeoutMs: parseDuration(
      s.clientBodyTimeout,
      "client-body-timeout",
    ),
    clientBodyBufferSize: bodyBufferSize(s.clientBodyBufferSize),
    clientBodyTempPath: absolute(
      baseDir,
      parsePath(s.clientBodyTempPath, "client-body-temp-path"),
    ),
    proxyRequestBuffering: parseSwitch(
      s.proxyRequestBuffering,
      "proxy-request-buffering",
    ),
    largeClientHeaderBuffers: headerBuffers(s.largeClientHeaderBuffers),
    spaFallback: parseSwitch(s.spaFallback, "spa-fallback"),
    logNotFound: parseSwitch(s.logNotFound, "log-not-found"),
    underscoresInHeaders: parseSwitch(
      s.underscoresInHeaders,
      "underscores-in-headers",
    ),
    cachePolicy: {
      html: parseHeaderValue(s.cacheHtml, "cache-html"),
      fingerprinted: parseHeaderValue(
        s.cacheFingerprinted,
        "cache-fingerprinted",
      ),
      other: parseHeaderValue(s.cacheOther, "cache-other"),
    },
  };
}
