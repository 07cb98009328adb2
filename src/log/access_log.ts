/**
 * The nginx `combined` access-log line, as a pure formatter.
 *
 * `combined` is `$remote_addr - $remote_user [$time_local] "$request" $status
 * $body_bytes_sent "$http_referer" "$http_user_agent"` (nginx
 * `ngx_http_log_module`). Variable values are escaped by
 * `ngx_http_log_escape`: `"`, `\` and bytes outside 0x20–0x7e become `\xHH`
 * (UTF-8 bytes one by one); an absent value is `-`.
 *
 * @module
 */

import { byteStringToBytes } from "../runtime/mod.ts";

const MONTHS = [
  "Jan",
  "Feb",
  "Mar",
  "Apr",
  "May",
  "Jun",
  "Jul",
  "Aug",
  "Sep",
  "Oct",
  "Nov",
  "Dec",
] as const;

/** One finished request, as the access log records it. */
export interface AccessLogEntry {
  /** When the request finished; printed in local time with its offset. */
  time: Date;
  /** The client address. */
  remoteAddr: string;
  /**
   * The user name from `Authorization: Basic`, if any, as a byte string (one
   * char per decoded byte, as {@linkcode basicAuthUser} returns it).
   */
  remoteUser?: string;
  /** The request line as received. */
  request: string;
  /** The status sent; 0 (printed `000`, as nginx's `%03ui`) when none was. */
  status: number;
  /** Body bytes sent to the client. */
  bodyBytesSent: number;
  /** The `Referer` header. */
  referrer?: string;
  /** The `User-Agent` header. */
  userAgent?: string;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * Formats nginx's `$time_local`: `15/Jan/2024:10:23:45 +0100`.
 *
 * @param time The time.
 * @returns The formatted local time with its UTC offset.
 *
 * @example Usage
 * ```ts
 * import { formatTimeLocal } from "./access_log.ts";
 * import { match } from "node:assert/strict";
 *
 * match(formatTimeLocal(new Date(2024, 0, 15, 10, 23, 45)), /^15\/Jan\/2024:10:23:45 [+-]\d{4}$/);
 * ```
 */
export function formatTimeLocal(time: Date): string {
  const offset = -time.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  return `${pad2(time.getDate())}/${
    MONTHS[time.getMonth()]
  }/${time.getFullYear()}:${pad2(time.getHours())}:${pad2(time.getMinutes())}:${
    pad2(time.getSeconds())
  } ${sign}${pad2(Math.floor(abs / 60))}${pad2(abs % 60)}`;
}

const encoder = new TextEncoder();
const HEX = "0123456789ABCDEF";

/**
 * Escapes a value as `ngx_http_log_escape` does.
 *
 * @param value The raw value.
 * @param encoding How `value` holds its bytes: `utf-8` for text decoded
 * from UTF-8 (the request line, as `Deno.serve` gives it), `latin1` for a
 * header value (a ByteString: one char per byte, as received).
 * @returns The escaped value.
 *
 * @example Usage
 * ```ts
 * import { escapeLogValue } from "./access_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeLogValue('GET /q"x HTTP/1.1'), "GET /q\\x22x HTTP/1.1");
 * ```
 */
export function escapeLogValue(
  value: string,
  encoding: "utf-8" | "latin1" = "utf-8",
): string {
  // Fast path: printable ASCII without `"` or `\` needs no work.
  if (/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(value)) return value;
  const bytes = encoding === "utf-8"
    ? encoder.encode(value)
    : byteStringToBytes(value);
  let out = "";
  for (const byte of bytes) {
    if (byte < 0x20 || byte > 0x7e || byte === 0x22 || byte === 0x5c) {
      out += `\\x${HEX[byte >> 4]}${HEX[byte & 15]}`;
    } else {
      out += String.fromCharCode(byte);
    }
  }
  return out;
}

function field(
  value: string | undefined,
  encoding: "utf-8" | "latin1",
): string {
  return value === undefined || value === ""
    ? "-"
    : escapeLogValue(value, encoding);
}

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
  return `${entry.remoteAddr} - ${field(entry.remoteUser, "latin1")} [${
    formatTimeLocal(entry.time)
  }] "${escapeLogValue(entry.request)}" ${
    String(entry.status).padStart(3, "0")
  } ${entry.bodyBytesSent} "${field(entry.referrer, "latin1")}" "${
    field(entry.userAgent, "latin1")
  }"`;
}

/**
 * Extracts `$remote_user` from an `Authorization: Basic` header, as nginx does
 * even though it checks no credentials. The user is a byte string (one char
 * per byte), never decoded: a lossy UTF-8 decode would log `\xEF\xBF\xBD`
 * where nginx logs the byte sent.
 *
 * @param authorization The header value, if any.
 * @returns The user name, or `undefined`.
 *
 * @example Usage
 * ```ts
 * import { basicAuthUser } from "./access_log.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(basicAuthUser("Basic dTpw"), "u");
 * ```
 */
export function basicAuthUser(
  authorization: string | null,
): string | undefined {
  const m = authorization?.match(/^basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!m?.[1]) return undefined;
  try {
    // atob() gives one char per byte; kept undecoded so the log escapes the
    // bytes as sent, as ngx_http_auth_basic_user() keeps them.
    const decoded = atob(m[1]);
    const colon = decoded.indexOf(":");
    return colon < 0 ? undefined : decoded.slice(0, colon);
  } catch {
    return undefined;
  }
}
