/**
 * The gateway's single setting values as nginx writes them: sizes, times,
 * on/off switches, the error log level, `Cache-Control` values and the
 * status path. Errors are thrown by meaning (`TypeError` for a wrong shape,
 * `RangeError` for a value out of range) with the std message style, naming
 * the setting and the value.
 *
 * @module
 */

import { LOG_LEVELS, type LogLevel } from "../log/mod.ts";
import { currentOsFamily, type OsFamily } from "../runtime/mod.ts";

/**
 * The longest time the gateway can wait for: `setTimeout()` fires at once
 * for a delay past 2^31-1 ms (about 24.8 days), so a longer one is refused.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Parses an nginx size: bytes, or a number with `k`, `m` or `g`.
 *
 * @param value The text, e.g. `16m`.
 * @param name The setting's name, for the error.
 * @returns The size in bytes.
 * @throws {TypeError} On a malformed size.
 * @throws {RangeError} On a size past `Number.MAX_SAFE_INTEGER`.
 *
 * @example Usage
 * ```ts
 * import { parseSize } from "./config_values.ts";
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
  const bytes = Number(m[1]) * unit;
  // Past 2^53 a number is no longer exact: refused, never rounded.
  if (!Number.isSafeInteger(bytes)) {
    throw new RangeError(
      `Cannot parse ${name} "${value}": must be at most ${Number.MAX_SAFE_INTEGER} bytes`,
    );
  }
  return bytes;
}

/**
 * Parses an nginx time: `500ms`, `60s`, `1m`, `1h`, or bare seconds.
 *
 * @param value The text.
 * @param name The setting's name, for the error.
 * @returns Milliseconds.
 * @throws {TypeError} On a malformed time.
 * @throws {RangeError} On 0 or a time past {@linkcode MAX_TIMER_MS}.
 *
 * @example Usage
 * ```ts
 * import { parseDuration } from "./config_values.ts";
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
  if (!Number.isSafeInteger(ms) || ms > MAX_TIMER_MS) {
    throw new RangeError(
      `Cannot parse ${name} "${value}": must be at most ${MAX_TIMER_MS}ms`,
    );
  }
  if (ms === 0) {
    throw new RangeError(
      `Cannot parse ${name} "${value}": must be more than 0`,
    );
  }
  return ms;
}

/**
 * Parses `--error-log-level`: one of nginx's levels.
 *
 * @param value The text.
 * @returns The level.
 * @throws {TypeError} On any other word.
 */
export function parseLevel(value: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new TypeError(
      `Cannot parse error-log-level "${value}": expected one of ${
        LOG_LEVELS.join(", ")
      }`,
    );
  }
  return value as LogLevel;
}

/**
 * Parses an nginx switch: `on` or `off`.
 *
 * @param value The text.
 * @param name The setting's name, for the error.
 * @returns Whether it is on.
 * @throws {TypeError} On any other word.
 */
export function parseSwitch(value: string, name: string): boolean {
  if (value !== "on" && value !== "off") {
    throw new TypeError(`Cannot parse ${name} "${value}": expected on or off`);
  }
  return value === "on";
}

/**
 * Parses a `Cache-Control` value of the cache policy: trimmed, not empty,
 * no control characters (it is written into response heads as it is), no
 * `$`. The value becomes a `map` value of the built-in configuration, where
 * nginx reads `$name` as a variable (ngx_http_map, a complex value): a
 * `$http_x` there would send what a client puts in its `X` field as the
 * response's caching policy. No Cache-Control directive (RFC 9111 §5.2 and
 * its registry) is written with a `$`, so one here is a variable meant to
 * be read, and is refused rather than sent as text.
 *
 * @param value The text.
 * @param name The setting's name, for the error.
 * @returns The trimmed value.
 * @throws {TypeError} When empty or holding a control character or `$`.
 *
 * @example Usage
 * ```ts
 * import { parseHeaderValue } from "./config_values.ts";
 * import { strictEqual, throws } from "node:assert/strict";
 *
 * strictEqual(parseHeaderValue(' private="Set-Cookie" ', "cache-html"), 'private="Set-Cookie"');
 * throws(() => parseHeaderValue("$http_x", "cache-html"), /cannot hold "\$"/);
 * ```
 */
export function parseHeaderValue(value: string, name: string): string {
  // deno-lint-ignore no-control-regex
  if (value.trim() === "" || /[\x00-\x1f\x7f]/.test(value)) {
    throw new TypeError(
      `Cannot parse ${name} "${value}": expected a Cache-Control value such as no-cache`,
    );
  }
  if (value.includes("$")) {
    throw new TypeError(
      `Cannot parse ${name} "${value}": a Cache-Control value cannot hold "$" (nginx would read a variable there, not text)`,
    );
  }
  return value.trim();
}

/**
 * Parses `--server-name`: the `server:` field of error-log lines and
 * `$server_name`, written as the built-in configuration's `server_name`.
 * Refused where `server_name` would not keep the name as written
 * (ngx_http_core_server_name): blanks and quotes, a leading `~` (a regex,
 * which nginx then matches each request's `Host` against), a leading `.`
 * (dropped from the field), `*` (a wildcard, or a name nginx refuses) and
 * `$` (`$hostname` is the machine's name). A host name needs none of them;
 * `;`, `{`, `}`, `#`, `'` and `\` are written quoted and kept as they are.
 *
 * @param value The text.
 * @returns The name.
 * @throws {TypeError} On any of those.
 *
 * @example Usage
 * ```ts
 * import { parseServerName } from "./config_values.ts";
 * import { strictEqual, throws } from "node:assert/strict";
 *
 * strictEqual(parseServerName("station-7"), "station-7");
 * throws(() => parseServerName("~^(.+)$"), /Cannot parse server-name/);
 * ```
 */
export function parseServerName(value: string): string {
  // nginx's blanks are space, tab, CR and LF (ngx_conf_read_token): a
  // no-break space typed into a file's `server_name` is part of the name.
  if (value === "" || /[ \t\r\n"]/.test(value)) {
    throw new TypeError(
      `Cannot parse server-name "${value}": expected a name without spaces or quotes`,
    );
  }
  if (/^[~.]|[*$]/.test(value)) {
    throw new TypeError(
      `Cannot parse server-name "${value}": expected a host name: nginx's server_name reads a leading "~" or ".", "*" and "$" as a pattern, not as text`,
    );
  }
  return value;
}

/**
 * Parses `--status-path`: `off`, or a plain path outside `/api/`.
 *
 * @param value The text.
 * @returns The path, or `null` for `off`.
 * @throws {TypeError} On anything else.
 */
export function parseStatusPath(value: string): string | null {
  if (value === "off") return null;
  if (!/^\/[A-Za-z0-9._~\/-]*$/.test(value) || value.startsWith("/api/")) {
    throw new TypeError(
      `Cannot parse status-path "${value}": expected off or a path like /__status outside /api/`,
    );
  }
  return value;
}

/**
 * Why the OS cannot take `value` as a path, or `null` when it can: a NUL
 * ends a C string, so the file opened would not be the one named; Windows
 * also refuses control characters and `<>"|?*` in names (outside the `\\?\`
 * and `\\.\` prefixes).
 *
 * @param value The path as given.
 * @param family Whose rules to apply.
 * @returns The reason, or `null`.
 *
 * @example Usage
 * ```ts
 * import { pathProblem } from "./config_values.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(pathProblem("html", "linux"), null);
 * strictEqual(pathProblem("ht\0ml", "linux"), "a path cannot hold a NUL byte");
 * ```
 */
export function pathProblem(
  value: string,
  family: OsFamily = currentOsFamily(),
): string | null {
  if (value.includes("\0")) return "a path cannot hold a NUL byte";
  if (family === "windows") {
    const rest = value.replace(/^\\\\[?.]\\/, "");
    // deno-lint-ignore no-control-regex
    if (/[\x01-\x1f<>"|?*]/.test(rest)) {
      return 'a Windows path cannot hold a control character or <>"|?*';
    }
  }
  return null;
}

/**
 * Checks a path setting (`root`, `error-log`, `access-log`): every layer
 * (flags, config file, nginx.conf) passes here, so none can hand the OS a
 * path it would truncate or refuse at the first request.
 *
 * @param value The path as given.
 * @param name The setting's name, for the error.
 * @param family Whose rules to apply.
 * @returns The value.
 * @throws {TypeError} When it is empty or the OS cannot take it as a path.
 *
 * @example Usage
 * ```ts
 * import { parsePath } from "./config_values.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parsePath("html", "root"), "html");
 * ```
 */
export function parsePath(
  value: string,
  name: string,
  family: OsFamily = currentOsFamily(),
): string {
  // Resolved against the program's folder, an empty path is that folder:
  // a `root` of it served the config and the logs (an unset variable in a
  // deployment script). nginx.conf paths are nginx's to read.
  if (value === "") {
    throw new TypeError(
      `Cannot parse ${name} "": expected a path, not an empty value`,
    );
  }
  const problem = pathProblem(value, family);
  if (problem !== null) {
    throw new TypeError(`Cannot parse ${name} "${value}": ${problem}`);
  }
  return value;
}
