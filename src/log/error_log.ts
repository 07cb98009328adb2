/**
 * The nginx error-log line, as a pure formatter.
 *
 * Mirrors `ngx_log_error_core` (`src/core/ngx_log.c`) for the prefix and
 * `ngx_http_log_error_handler` (`src/http/ngx_http_request.c`) for the request
 * context. The line is a wire format read by people and tools that know
 * nginx, so every separator and quote is exact.
 *
 * @module
 */

import {
  byteStringToBytes,
  type OsErrorText,
  textBytes,
} from "../runtime/mod.ts";

/** nginx's levels, most severe first (`err_levels[]` in `ngx_log.c`). */
export const LOG_LEVELS = [
  "emerg",
  "alert",
  "crit",
  "error",
  "warn",
  "notice",
  "info",
  "debug",
] as const;

/** One of nginx's error-log levels. */
export type LogLevel = typeof LOG_LEVELS[number];

/**
 * nginx builds a line in `NGX_MAX_ERROR_STR` (2048) bytes, the newline
 * included (`ngx_log_error_core`): at most 2047 bytes of text.
 */
export const MAX_ERROR_LINE_LENGTH = 2047;

/** Everything one error-log line can hold, in nginx's field order. */
export interface ErrorLogEntry {
  /** When it happened; printed in local time. */
  time: Date;
  /** The level. */
  level: LogLevel;
  /** The process id. */
  pid: number;
  /** The thread id (nginx prints `GetCurrentThreadId()` / `gettid()`). */
  tid: number;
  /** The connection serial number (`*N`); absent outside a connection. */
  connection?: number;
  /** The message, e.g. `connect() failed`. */
  message: string;
  /** The OS error, printed after the message. */
  osError?: OsErrorText;
  /** What was being done, printed as ` while <action>`. */
  action?: string;
  /** The client address (IPv6 without brackets). */
  client?: string;
  /** The server name; present whenever `client` is. */
  server?: string;
  /** The request line as received, e.g. `POST /api/loginms HTTP/1.1`. */
  request?: string;
  /** A subrequest's `$uri` (SSI's `include`), after the main request's line. */
  subrequest?: string;
  /** The upstream URL: scheme, peer and the URI sent upstream. */
  upstream?: string;
  /** The raw `Host` header, as `Headers` holds it (one char per byte). */
  host?: string;
  /** The raw `Referer` header, as `Headers` holds it (one char per byte). */
  referrer?: string;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * Formats a time as nginx's error log does: `YYYY/MM/DD HH:MM:SS`, local time.
 *
 * @param time The time.
 * @returns The formatted time.
 *
 * @example Usage
 * ```ts
 * import { formatErrorLogTime } from "./error_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(formatErrorLogTime(new Date(2024, 0, 15, 10, 23, 45)), "2024/01/15 10:23:45");
 * ```
 */
export function formatErrorLogTime(time: Date): string {
  return `${time.getFullYear()}/${pad2(time.getMonth() + 1)}/${
    pad2(time.getDate())
  } ${pad2(time.getHours())}:${pad2(time.getMinutes())}:${
    pad2(time.getSeconds())
  }`;
}

/**
 * Formats one error-log line, without the final newline.
 *
 * Optional fields appear only when set, in nginx's fixed order; `client:` and
 * `server:` are unquoted, the rest quoted. Lines longer than
 * {@linkcode MAX_ERROR_LINE_LENGTH} are cut as nginx cuts them.
 *
 * @param entry The line's parts.
 * @returns The line.
 *
 * @example The interface spec's line
 * ```ts
 * import { formatErrorLogLine } from "./error_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const line = formatErrorLogLine({
 *   time: new Date(2024, 0, 15, 10, 23, 45),
 *   level: "error",
 *   pid: 1234,
 *   tid: 5678,
 *   connection: 12,
 *   message: "connect() failed",
 *   osError: {
 *     code: 10061,
 *     text: "No connection could be made because the target machine actively refused it",
 *   },
 *   action: "connecting to upstream",
 *   client: "127.0.0.1",
 *   server: "localhost",
 *   request: "POST /api/loginms HTTP/1.1",
 *   upstream: "http://127.0.0.1:8080/loginms",
 *   host: "localhost:8081",
 *   referrer: "http://localhost:8081/",
 * });
 * strictEqual(
 *   line,
 *   '2024/01/15 10:23:45 [error] 1234#5678: *12 connect() failed (10061: No connection could be made because the target machine actively refused it) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:8080/loginms", host: "localhost:8081", referrer: "http://localhost:8081/"',
 * );
 * ```
 */
export function formatErrorLogLine(entry: ErrorLogEntry): string {
  let line = `${
    formatErrorLogTime(entry.time)
  } [${entry.level}] ${entry.pid}#${entry.tid}: `;
  if (entry.connection !== undefined) line += `*${entry.connection} `;
  // Messages quote config values, paths and OS texts: escaped here so no
  // caller can forget and let a CR or LF split the line.
  line += escapeErrorLogText(entry.message, "utf-8");
  if (entry.osError) {
    line += ` (${entry.osError.code}: ${
      escapeErrorLogText(entry.osError.text, "utf-8")
    })`;
  }
  if (entry.action !== undefined) line += ` while ${entry.action}`;
  if (entry.client !== undefined) {
    line += `, client: ${entry.client}, server: ${entry.server ?? ""}`;
  }
  if (entry.request !== undefined) {
    line += `, request: "${escapeErrorLogText(entry.request, "utf-8")}"`;
  }
  if (entry.subrequest !== undefined) {
    line += `, subrequest: "${escapeErrorLogText(entry.subrequest, "utf-8")}"`;
  }
  if (entry.upstream !== undefined) {
    line += `, upstream: "${escapeErrorLogText(entry.upstream, "utf-8")}"`;
  }
  if (entry.host !== undefined) {
    line += `, host: "${escapeErrorLogText(entry.host, "latin1")}"`;
  }
  if (entry.referrer !== undefined) {
    line += `, referrer: "${escapeErrorLogText(entry.referrer, "latin1")}"`;
  }
  return cutToBytes(line, MAX_ERROR_LINE_LENGTH);
}

const encoder = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: true });
const HEX = "0123456789ABCDEF";

/**
 * An untrusted value as the error log holds it. nginx copies these bytes
 * raw (its parsers have refused NUL, CR and LF before), and UTF-8 stays as
 * it came; a control byte, DEL or a byte that is not UTF-8 becomes `\xHH`
 * as in the access log (`ngx_http_log_escape`), so nothing from a client or
 * upstream can break a line, fake one or reach a terminal as a command.
 *
 * @param value The value.
 * @param encoding How `value` holds its bytes: `utf-8` for text (the request
 * line as `Deno.serve` gives it), `latin1` for a ByteString (a header value,
 * one char per byte as received).
 * @returns The text to write.
 *
 * @example Usage
 * ```ts
 * import { escapeErrorLogText } from "./error_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeErrorLogText("a\rb\u00e4\u00b8\u00ad\u00ff", "latin1"), "a\\x0Db中\\xFF");
 * strictEqual(escapeErrorLogText("/a\udcffb", "utf-8"), "/a\\xFFb");
 * ```
 */
export function escapeErrorLogText(
  value: string,
  encoding: "utf-8" | "latin1",
): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  // Text's bytes as nginx holds them: a byte that is not UTF-8 (a `$uri`
  // decoded from `%FF`, held as U+DCFF) is that byte, escaped below.
  const bytes = encoding === "utf-8"
    ? textBytes(value)
    : byteStringToBytes(value);
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    if (b >= 0x20 && b < 0x7f) {
      out += String.fromCharCode(b);
      i++;
      continue;
    }
    const n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 0;
    if (n > 0 && i + n <= bytes.length) {
      try {
        out += utf8.decode(bytes.subarray(i, i + n));
        i += n;
        continue;
      } catch {
        // Not a UTF-8 sequence: escaped byte by byte below.
      }
    }
    out += `\\x${HEX[b >> 4]}${HEX[b & 15]}`;
    i++;
  }
  return out;
}

/**
 * One start-up line on stderr, as nginx prints them (`nginx: [emerg] …`):
 * the message (and OS error) escaped as in the error log, so a config value
 * holding CR or LF cannot split it.
 *
 * @param level The level in brackets, or `undefined` for nginx's unlabelled
 * lines (`configuration test is successful`).
 * @param message The text.
 * @param osError The OS error to append, if any.
 * @returns The line, ending in a newline.
 *
 * @example Usage
 * ```ts
 * import { formatConsoleLine } from "./error_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(
 *   formatConsoleLine("emerg", 'unknown directive "a\nb"'),
 *   'station-gateway: [emerg] unknown directive "a\\x0Ab"\n',
 * );
 * ```
 */
export function formatConsoleLine(
  level: string | undefined,
  message: string,
  osError?: { code: number; text: string },
): string {
  const os = osError === undefined
    ? ""
    : ` (${osError.code}: ${escapeErrorLogText(osError.text, "utf-8")})`;
  return `station-gateway:${level === undefined ? "" : ` [${level}]`} ${
    escapeErrorLogText(message, "utf-8")
  }${os}\n`;
}

/**
 * `line` cut to at most `max` UTF-8 bytes, never inside a character (the
 * line is written as UTF-8 text).
 */
function cutToBytes(line: string, max: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short lines need no count.
  if (line.length * 3 <= max) return line;
  const bytes = encoder.encode(line);
  if (bytes.length <= max) return line;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/**
 * Tells whether a line at `level` is written when the log is set to
 * `threshold` (nginx writes a level and every more severe one).
 *
 * @param level The line's level.
 * @param threshold The configured level.
 * @returns Whether to write it.
 *
 * @example Usage
 * ```ts
 * import { isLevelEnabled } from "./error_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isLevelEnabled("info", "error"), false);
 * strictEqual(isLevelEnabled("emerg", "error"), true);
 * ```
 */
export function isLevelEnabled(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(threshold);
}

/**
 * Names an error in one line: `Name: message at <first stack frame>`. The
 * frame says where a bug is without a multi-line stack in the log.
 *
 * @param value What was thrown.
 * @returns One line.
 */
export function describeError(value: unknown): string {
  if (!(value instanceof Error)) return String(value);
  const head = `${value.name}: ${value.message}`;
  const frame = value.stack?.split("\n").find((l) => /^\s+at /.test(l));
  const text = frame ? `${head} ${frame.trim()}` : head;
  return text.replaceAll(/\s*\n\s*/g, " ");
}
