/**
 * The `combined` access-log line the gateway writes today, through the one
 * `log_format` writer (`log_format.ts`): `$remote_addr - $remote_user
 * [$time_local] "$request" $status $body_bytes_sent "$http_referer"
 * "$http_user_agent"` (nginx `ngx_http_log_module`).
 *
 * @module
 */

import { COMBINED, formatLogLine } from "./log_format.ts";
import type { HeaderReader, LogRecord } from "./log_record.ts";

export { escapeLogValue, formatTimeLocal } from "./log_values.ts";

/** One finished request, as the `combined` line records it. */
export interface AccessLogEntry {
  /** When the request finished; printed in local time with its offset. */
  time: Date;
  /** The client address. */
  remoteAddr: string;
  /**
   * The user name from `Authorization: Basic`, if any, as a byte string (one
   * char per decoded byte, as the access module's `parseBasicCredentials`
   * returns it).
   */
  remoteUser?: string;
  /** The request line as received. */
  request: string;
  /** The status sent; 0 (printed `000`, as nginx's `%03ui`) when none was. */
  status: number;
  /** Body bytes sent to the client. */
  bodyBytesSent: number;
  /** The `Referer` header; `""` when sent empty (printed `""`, not `"-"`). */
  referrer?: string;
  /** The `User-Agent` header; `""` when sent empty. */
  userAgent?: string;
}

const NO_HEADERS: HeaderReader = { get: () => null };

/**
 * Formats one `combined` line, without the final newline.
 *
 * @param entry The request's fields.
 * @returns The line.
 *
 * @example Usage
 * ```ts
 * import { formatAccessLogLine } from "./access_log.ts";
 * import { match } from "node:assert/strict";
 *
 * const line = formatAccessLogLine({
 *   time: new Date(2024, 0, 15, 10, 23, 45),
 *   remoteAddr: "127.0.0.1",
 *   request: "POST /api/loginms HTTP/1.1",
 *   status: 502,
 *   bodyBytesSent: 157,
 *   referrer: "http://localhost:8081/",
 *   userAgent: "curl/7.88.1",
 * });
 * match(line, /^127\.0\.0\.1 - - \[15\/Jan\/2024:10:23:45 [+-]\d{4}\] "POST \/api\/loginms HTTP\/1\.1" 502 157 "http:\/\/localhost:8081\/" "curl\/7\.88\.1"$/);
 * ```
 */
export function formatAccessLogLine(entry: AccessLogEntry): string {
  const { referrer, userAgent } = entry;
  const record: LogRecord = {
    time: entry.time,
    startMs: entry.time.getTime(),
    remoteAddr: entry.remoteAddr,
    remoteUser: entry.remoteUser,
    request: entry.request,
    requestLength: 0,
    headers: {
      get: (name) =>
        (name === "referer"
          ? referrer
          : name === "user-agent"
          ? userAgent
          : undefined) ?? null,
    },
    connection: 0,
    connectionRequests: 0,
    pipelined: false,
    status: entry.status,
    bodyBytesSent: entry.bodyBytesSent,
    bytesSent: entry.bodyBytesSent,
    responseHeaders: NO_HEADERS,
  };
  return formatLogLine(COMBINED, record);
}
