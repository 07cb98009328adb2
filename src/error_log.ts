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

import { byteStringToText } from "./byte_string.ts";

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

/** nginx truncates a line at `NGX_MAX_ERROR_STR` bytes (2048). */
export const MAX_ERROR_LINE_LENGTH = 2048;

/** An OS error as nginx prints it: ` (code: text)`. */
export interface OsErrorText {
  /** The errno or Windows code. */
  code: number;
  /** The English text, without a final period. */
  text: string;
}

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
  line += entry.message;
  if (entry.osError) {
    line += ` (${entry.osError.code}: ${entry.osError.text})`;
  }
  if (entry.action !== undefined) line += ` while ${entry.action}`;
  if (entry.client !== undefined) {
    line += `, client: ${entry.client}, server: ${entry.server ?? ""}`;
  }
  if (entry.request !== undefined) line += `, request: "${entry.request}"`;
  if (entry.upstream !== undefined) line += `, upstream: "${entry.upstream}"`;
  // nginx writes these bytes raw; the line is written as UTF-8, so they go
  // in as the text their bytes spell.
  if (entry.host !== undefined) {
    line += `, host: "${byteStringToText(entry.host)}"`;
  }
  if (entry.referrer !== undefined) {
    line += `, referrer: "${byteStringToText(entry.referrer)}"`;
  }
  return line.length > MAX_ERROR_LINE_LENGTH
    ? line.slice(0, MAX_ERROR_LINE_LENGTH)
    : line;
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
