/**
 * The gateway's settings: their defaults, and merging the config file
 * (`config_file.ts`) and the flags into one validated
 * {@linkcode GatewayConfig}; each value is parsed by `addresses.ts` or
 * `config_values.ts`. The settings given are in `settings_input.ts`, the
 * validated ones in `gateway_config.ts`.
 * Errors are thrown by meaning (`TypeError` for a wrong shape, `RangeError`
 * for a value out of range) with the std message style, naming the value.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import {
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
  parseServerName,
  parseSize,
  parseStatusPath,
  parseSwitch,
} from "./config_values.ts";
import { parseErrorPages } from "./error_pages.ts";
import type { GatewayConfig } from "./gateway_config.ts";
import { DEFAULT_SETTINGS, type SettingsInput } from "./settings_input.ts";
import {
  MAX_CLIENT_BODY_BUFFER_SIZE,
  MAX_HEADER_BUFFER_SIZE,
  MAX_HEADER_BUFFERS,
  MAX_PROXY_BUFFER_SIZE,
  MAX_UPSTREAM_KEEPALIVE,
  sizeText,
} from "./bounds.ts";

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
  return {
    listen: parseListen(s.listen),
    upstreams: upstreamList(s.upstream),
    upstreamGroup: parseGroupName(s.upstreamGroup),
    root: absolute(baseDir, parsePath(s.root, "root")),
    serverName: parseServerName(s.serverName),
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
