/**
 * The gateway's settings: parsing each value, reading the JSON config file,
 * and merging file and flags into one validated {@linkcode GatewayConfig}.
 * Errors are thrown by meaning (`TypeError` for a wrong shape, `RangeError`
 * for a value out of range) with the std message style, naming the value.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import {
  type CachePolicy,
  DEFAULT_CACHE_POLICY,
} from "./content_negotiation.ts";
import { LOG_LEVELS, type LogLevel } from "./error_log.ts";

/** An address to listen on. `localhost` means both 127.0.0.1 and ::1. */
export interface ListenAddress {
  /** A host name or IP address; `localhost` listens on both loopbacks. */
  hostname: string;
  /** The port; 0 picks a free one. */
  port: number;
}

/** The upstream application's address. */
export interface UpstreamAddress {
  /** Host name or IP address (IPv6 without brackets), lower case. */
  hostname: string;
  /** The port. */
  port: number;
  /** `http://host[:port]` as `fetch` and `Location` matching see it. */
  origin: string;
  /** `host:port`, as nginx prints the peer in `upstream: "…"`. */
  peer: string;
}

/** Settings as given in the config file or on the command line. */
export interface SettingsInput {
  /** `[host:]port`. */
  listen?: string;
  /** `http://host[:port] [backup] [max_fails=N] [fail_timeout=T]`, one or more. */
  upstream?: string | string[];
  /** The group name printed in `no live upstreams` lines. */
  upstreamGroup?: string;
  /** The client-app folder. */
  root?: string;
  /** The `server:` field of error-log lines. */
  serverName?: string;
  /** The error-log file. */
  errorLog?: string;
  /** The access-log file, or `off`. */
  accessLog?: string;
  /** The least severe error-log level written. */
  errorLogLevel?: string;
  /** Add `X-Forwarded-For`/`-Proto`/`-Host` upstream. */
  addForwardedHeaders?: boolean;
  /** Rotate a log before it exceeds this size (`16m`; `0` = never). */
  logMaxSize?: string;
  /** How many rotated files to keep per log. */
  logKeep?: number;
  /** nginx `proxy_connect_timeout`, e.g. `60s`. */
  proxyConnectTimeout?: string;
  /** nginx `proxy_send_timeout`: between two successive writes. */
  proxySendTimeout?: string;
  /** nginx `proxy_read_timeout`: between two successive reads. */
  proxyReadTimeout?: string;
  /** nginx `client_max_body_size`, e.g. `1m`; `0` is unlimited. */
  clientMaxBodySize?: string;
  /** Idle upstream connections kept for reuse; 0 = one connection per request. */
  upstreamKeepalive?: number;
  /** `on`: app routes without a file get `index.html`; `off`: 404. */
  spaFallback?: string;
  /** `on`: missing files are logged as nginx does; `off`: not. */
  logNotFound?: string;
  /** `Cache-Control` for HTML documents. */
  cacheHtml?: string;
  /** `Cache-Control` for fingerprinted assets (`app.3f9a2c1b.js`). */
  cacheFingerprinted?: string;
  /** `Cache-Control` for other static files. */
  cacheOther?: string;
  /** The status endpoint's path, or `off`. */
  statusPath?: string;
}

/** The validated settings the gateway runs with. */
export interface GatewayConfig {
  /** Where to listen. */
  listen: ListenAddress;
  /** Where `/api/` goes: one server or several with failover. */
  upstreams: UpstreamServerSpec[];
  /** The group name printed in `no live upstreams` lines. */
  upstreamGroup: string;
  /** The client-app folder, absolute. */
  root: string;
  /** The `server:` field. */
  serverName: string;
  /** The error-log path, absolute. */
  errorLog: string;
  /** The access-log path, absolute, or `null` when off. */
  accessLog: string | null;
  /** The least severe error-log level written. */
  errorLogLevel: LogLevel;
  /** Add `X-Forwarded-*` upstream. */
  addForwardedHeaders: boolean;
  /** Rotation size in bytes; 0 never rotates. */
  logMaxBytes: number;
  /** Rotated files kept per log. */
  logKeep: number;
  /** The upstream timers in milliseconds. */
  timeouts: { connectMs: number; sendMs: number; readMs: number };
  /** `client_max_body_size` in bytes; 0 is unlimited. */
  clientMaxBodySize: number;
  /** Idle upstream connections kept. */
  upstreamKeepalive: number;
  /** App routes without a file get `index.html`. */
  spaFallback: boolean;
  /** Missing files are logged. */
  logNotFound: boolean;
  /** `Cache-Control` values for static files. */
  cachePolicy: CachePolicy;
  /** The status endpoint's path, or `null` when off. */
  statusPath: string | null;
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
  clientMaxBodySize: "1m",
  upstreamKeepalive: 64,
  spaFallback: "on",
  logNotFound: "on",
  cacheHtml: DEFAULT_CACHE_POLICY.html,
  cacheFingerprinted: DEFAULT_CACHE_POLICY.fingerprinted,
  cacheOther: DEFAULT_CACHE_POLICY.other,
  statusPath: "off",
} as const satisfies Required<SettingsInput>;

/** One `server` of the upstream group (parsed in `upstream_group.ts`). */
export interface UpstreamServerSpec {
  /** The address. */
  address: UpstreamAddress;
  /** Used only when every primary is unavailable. */
  backup: boolean;
  /** Failures within `failTimeoutMs` that make the server unavailable (0 = never). */
  maxFails: number;
  /** How long failures count, and how long an unavailable server is skipped. */
  failTimeoutMs: number;
}

/** The port the upstream gets when `--upstream` names none. */
export const DEFAULT_UPSTREAM_PORT = 8080;

function parsePort(text: string, what: string, value: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port > 65535) {
    throw new RangeError(
      `Cannot parse ${what} "${value}": port must be 0 to 65535`,
    );
  }
  return port;
}

/**
 * Parses `--listen`: `port`, `host:port`, `[v6]:port` or `*:port`.
 *
 * @param value The text.
 * @returns The address; a bare port listens on `localhost` (both loopbacks),
 * so nothing is exposed to the LAN unless asked.
 * @throws {TypeError | RangeError} On a malformed value.
 *
 * @example Usage
 * ```ts
 * import { parseListen } from "./config.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseListen("8081"), { hostname: "localhost", port: 8081 });
 * deepStrictEqual(parseListen("*:80"), { hostname: "0.0.0.0", port: 80 });
 * ```
 */
export function parseListen(value: string): ListenAddress {
  if (/^\d+$/.test(value)) {
    return { hostname: "localhost", port: parsePort(value, "listen", value) };
  }
  const m = value.match(/^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.*-]+)):(\d+)$/);
  if (!m) {
    throw new TypeError(
      `Cannot parse listen "${value}": expected [host:]port, like 127.0.0.1:8081`,
    );
  }
  const host = m[1] ?? m[2] ?? "";
  return {
    hostname: host === "*" ? "0.0.0.0" : host.toLowerCase(),
    port: parsePort(m[3] ?? "", "listen", value),
  };
}

/**
 * Parses `--upstream`: an `http://` URL with a host, an optional port (8080
 * when omitted) and nothing after it but an optional `/`.
 *
 * @param value The text.
 * @returns The address.
 * @throws {TypeError | RangeError} On anything else, naming the value.
 *
 * @example Usage
 * ```ts
 * import { parseUpstream } from "./config.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseUpstream("http://10.1.2.3").origin, "http://10.1.2.3:8080");
 * ```
 */
export function parseUpstream(value: string): UpstreamAddress {
  const m = value.match(
    /^http:\/\/(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d+))?\/?$/i,
  );
  if (!m) {
    throw new TypeError(
      `Cannot parse upstream "${value}": expected an http URL with a host, like http://127.0.0.1:8080`,
    );
  }
  const v6 = m[1];
  const hostname = (v6 ?? m[2] ?? "").toLowerCase();
  const port = m[3] === undefined
    ? DEFAULT_UPSTREAM_PORT
    : parsePort(m[3], "upstream", value);
  if (port === 0) {
    throw new RangeError(
      `Cannot parse upstream "${value}": port must not be 0`,
    );
  }
  const host = v6 === undefined ? hostname : `[${hostname}]`;
  return {
    hostname,
    port,
    // WHATWG URLs drop the scheme's default port: match what fetch and the
    // upstream's own absolute URLs show.
    origin: port === 80 ? `http://${host}` : `http://${host}:${port}`,
    peer: `${host}:${port}`,
  };
}

/**
 * Parses an nginx size: bytes, or a number with `k`, `m` or `g`.
 *
 * @param value The text, e.g. `16m`.
 * @param name The setting's name, for the error.
 * @returns The size in bytes.
 * @throws {TypeError} On a malformed size.
 *
 * @example Usage
 * ```ts
 * import { parseSize } from "./config.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseSize("1m", "size"), 1048576);
 * ```
 */
export function parseSize(value: string, name: string): number {
  const m = value.trim().match(/^(\d+)([kmg]?)$/i);
  if (!m?.[1]) {
    throw new TypeError(
      `Cannot parse ${name} "${value}": expected a size like 512k, 16m or 1g`,
    );
  }
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    (m[2] ?? "").toLowerCase() as "" | "k" | "m" | "g"
  ];
  return Number(m[1]) * unit;
}

/**
 * Parses an nginx time: `500ms`, `60s`, `1m`, `1h`, or bare seconds.
 *
 * @param value The text.
 * @param name The setting's name, for the error.
 * @returns Milliseconds.
 * @throws {TypeError} On a malformed time.
 *
 * @example Usage
 * ```ts
 * import { parseDuration } from "./config.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseDuration("60s", "t"), 60000);
 * strictEqual(parseDuration("250ms", "t"), 250);
 * ```
 */
export function parseDuration(value: string, name: string): number {
  const m = value.trim().match(/^(\d+)(ms|s|m|h)?$/);
  if (!m?.[1]) {
    throw new TypeError(
      `Cannot parse ${name} "${value}": expected a time like 500ms, 60s or 2m`,
    );
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[
    (m[2] ?? "s") as "ms" | "s" | "m" | "h"
  ];
  const ms = Number(m[1]) * unit;
  if (ms === 0) {
    throw new RangeError(
      `Cannot parse ${name} "${value}": must be more than 0`,
    );
  }
  return ms;
}

function parseLevel(value: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new TypeError(
      `Cannot parse error-log-level "${value}": expected one of ${
        LOG_LEVELS.join(", ")
      }`,
    );
  }
  return value as LogLevel;
}

const FILE_KEYS: Readonly<
  Record<keyof SettingsInput, "string" | "boolean" | "number" | "strings">
> = {
  listen: "string",
  upstream: "strings",
  upstreamGroup: "string",
  root: "string",
  serverName: "string",
  errorLog: "string",
  accessLog: "string",
  errorLogLevel: "string",
  addForwardedHeaders: "boolean",
  logMaxSize: "string",
  logKeep: "number",
  proxyConnectTimeout: "string",
  proxySendTimeout: "string",
  proxyReadTimeout: "string",
  clientMaxBodySize: "string",
  upstreamKeepalive: "number",
  spaFallback: "string",
  logNotFound: "string",
  cacheHtml: "string",
  cacheFingerprinted: "string",
  cacheOther: "string",
  statusPath: "string",
};

/**
 * Parses the JSON config file. Keys are the flags' names in camelCase.
 *
 * @param text The file's text.
 * @param path The file's path, for messages.
 * @returns The settings it holds.
 * @throws {SyntaxError | TypeError} On invalid JSON, an unknown key or a
 * wrong type, naming the key.
 *
 * @example Usage
 * ```ts
 * import { parseConfigFile } from "./config.ts";
 * import { throws } from "node:assert/strict";
 *
 * throws(() => parseConfigFile('{"listn": "8081"}', "gw.json"), /unknown key "listn"/);
 * ```
 */
export function parseConfigFile(text: string, path: string): SettingsInput {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(
      `Cannot parse config file "${path}": ${
        error instanceof Error ? error.message : error
      }`,
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new TypeError(
      `Cannot parse config file "${path}": expected a JSON object`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === "$schema" || key === "$comment") continue;
    const type = FILE_KEYS[key as keyof SettingsInput];
    if (type === undefined) {
      throw new TypeError(
        `Cannot parse config file "${path}": unknown key "${key}"`,
      );
    }
    const actual: string = Array.isArray(value) &&
        value.every((v) => typeof v === "string")
      ? "strings"
      : typeof value;
    const fits = actual === type ||
      (type === "strings" && actual === "string");
    if (!fits) {
      throw new TypeError(
        `Cannot parse config file "${path}": key "${key}" must be a ${
          type === "strings" ? "string or a list of strings" : type
        }`,
      );
    }
    out[key] = value;
  }
  return out as SettingsInput;
}

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

function parseStatusPath(value: string): string | null {
  if (value === "off") return null;
  if (!/^\/[A-Za-z0-9._~\/-]*$/.test(value) || value.startsWith("/api/")) {
    throw new TypeError(
      `Cannot parse status-path "${value}": expected off or a path like /__status outside /api/`,
    );
  }
  return value;
}

function parseSwitch(value: string, name: string): boolean {
  if (value !== "on" && value !== "off") {
    throw new TypeError(`Cannot parse ${name} "${value}": expected on or off`);
  }
  return value === "on";
}

function parseHeaderValue(value: string, name: string): string {
  // deno-lint-ignore no-control-regex
  if (value.trim() === "" || /[\x00-\x1f\x7f]/.test(value)) {
    throw new TypeError(
      `Cannot parse ${name} "${value}": expected a Cache-Control value such as no-cache`,
    );
  }
  return value.trim();
}

function parseGroupName(value: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(value)) {
    throw new TypeError(
      `Cannot parse upstream-group "${value}": expected letters, digits, ".", "_" or "-"`,
    );
  }
  return value;
}

/**
 * Parses one upstream as nginx writes a `server` line:
 * `URL [backup] [max_fails=N] [fail_timeout=T]`.
 *
 * @param value The text.
 * @returns The server.
 * @throws {TypeError | RangeError} On anything else, naming the value.
 *
 * @example Usage
 * ```ts
 * import { parseUpstreamServer } from "./config.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const s = parseUpstreamServer("http://127.0.0.1 backup fail_timeout=30s");
 * strictEqual(s.address.peer, "127.0.0.1:8080");
 * strictEqual(s.backup, true);
 * strictEqual(s.failTimeoutMs, 30000);
 * ```
 */
export function parseUpstreamServer(value: string): UpstreamServerSpec {
  const [url = "", ...params] = value.trim().split(/\s+/);
  const spec: UpstreamServerSpec = {
    address: parseUpstream(url),
    backup: false,
    maxFails: 1,
    failTimeoutMs: 10_000,
  };
  for (const param of params) {
    const [key, arg] = param.split("=", 2) as [string, string | undefined];
    if (key === "backup" && arg === undefined) spec.backup = true;
    else if (key === "max_fails" && arg !== undefined && /^\d+$/.test(arg)) {
      spec.maxFails = Number(arg);
    } else if (key === "fail_timeout" && arg !== undefined) {
      spec.failTimeoutMs = parseDuration(arg, "fail_timeout");
    } else {
      throw new TypeError(
        `Cannot parse upstream "${value}": unknown parameter "${param}", expected backup, max_fails=N or fail_timeout=T`,
      );
    }
  }
  return spec;
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
    s.upstreamKeepalive > 1024
  ) {
    throw new RangeError(
      `Cannot parse upstream-keepalive "${s.upstreamKeepalive}": expected a whole number from 0 to 1024`,
    );
  }
  if (s.serverName === "" || /[\s"]/.test(s.serverName)) {
    throw new TypeError(
      `Cannot parse server-name "${s.serverName}": expected a name without spaces or quotes`,
    );
  }
  return {
    listen: parseListen(s.listen),
    upstreams: upstreamList(s.upstream),
    upstreamGroup: parseGroupName(s.upstreamGroup),
    root: absolute(baseDir, s.root),
    serverName: s.serverName,
    errorLog: absolute(baseDir, s.errorLog),
    accessLog: s.accessLog === "off" ? null : absolute(baseDir, s.accessLog),
    errorLogLevel: parseLevel(s.errorLogLevel),
    addForwardedHeaders: s.addForwardedHeaders,
    logMaxBytes: parseSize(s.logMaxSize, "log-max-size"),
    logKeep: s.logKeep,
    timeouts: {
      connectMs: parseDuration(s.proxyConnectTimeout, "proxy-connect-timeout"),
      sendMs: parseDuration(s.proxySendTimeout, "proxy-send-timeout"),
      readMs: parseDuration(s.proxyReadTimeout, "proxy-read-timeout"),
    },
    clientMaxBodySize: parseSize(s.clientMaxBodySize, "client-max-body-size"),
    upstreamKeepalive: s.upstreamKeepalive,
    statusPath: parseStatusPath(s.statusPath),
    spaFallback: parseSwitch(s.spaFallback, "spa-fallback"),
    logNotFound: parseSwitch(s.logNotFound, "log-not-found"),
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
