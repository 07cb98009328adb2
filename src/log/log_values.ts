/**
 * How values are written into access-log lines (`ngx_http_log_module`):
 * nginx's times and its three escaping modes.
 *
 * @module
 */

import { byteStringToBytes, MONTH_NAMES } from "../runtime/mod.ts";

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function offset(time: Date, colon: boolean): string {
  const minutes = -time.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${pad2(Math.floor(abs / 60))}${
    colon ? ":" : ""
  }${pad2(abs % 60)}`;
}

/**
 * Formats nginx's `$time_local`: `15/Jan/2024:10:23:45 +0100`.
 *
 * @param time The time.
 * @returns The formatted local time with its UTC offset.
 *
 * @example Usage
 * ```ts
 * import { formatTimeLocal } from "./log_values.ts";
 * import { match } from "node:assert/strict";
 *
 * match(formatTimeLocal(new Date(2024, 0, 15, 10, 23, 45)), /^15\/Jan\/2024:10:23:45 [+-]\d{4}$/);
 * ```
 */
export function formatTimeLocal(time: Date): string {
  return `${pad2(time.getDate())}/${
    MONTH_NAMES[time.getMonth()]
  }/${time.getFullYear()}:${pad2(time.getHours())}:${pad2(time.getMinutes())}:${
    pad2(time.getSeconds())
  } ${offset(time, false)}`;
}

/**
 * Formats nginx's `$time_iso8601`: `2024-01-15T10:23:45+01:00`, local time.
 *
 * @param time The time.
 * @returns The formatted time.
 *
 * @example Usage
 * ```ts
 * import { formatTimeIso8601 } from "./log_values.ts";
 * import { match } from "node:assert/strict";
 *
 * match(formatTimeIso8601(new Date(2024, 0, 15, 10, 23, 45)), /^2024-01-15T10:23:45[+-]\d\d:\d\d$/);
 * ```
 */
export function formatTimeIso8601(time: Date): string {
  return `${time.getFullYear()}-${pad2(time.getMonth() + 1)}-${
    pad2(time.getDate())
  }T${pad2(time.getHours())}:${pad2(time.getMinutes())}:${
    pad2(time.getSeconds())
  }${offset(time, true)}`;
}

/**
 * Seconds with milliseconds, as nginx's `%T.%03M` (`$msec`,
 * `$request_time`, `$upstream_response_time`).
 *
 * @param ms Milliseconds; a negative value prints as 0, as nginx clamps it.
 * @returns `1700000000.123`.
 *
 * @example Usage
 * ```ts
 * import { formatSeconds } from "./log_values.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(formatSeconds(1234), "1.234");
 * ```
 */
export function formatSeconds(ms: number): string {
  const whole = Math.max(0, Math.floor(ms));
  return `${Math.floor(whole / 1000)}.${String(whole % 1000).padStart(3, "0")}`;
}

const encoder = new TextEncoder();
const HEX = "0123456789ABCDEF";

/**
 * Escapes a value as `ngx_http_log_escape` does (`escape=default`).
 *
 * @param value The raw value.
 * @param encoding How `value` holds its bytes: `utf-8` for text decoded
 * from UTF-8 (the request line, as `Deno.serve` gives it), `latin1` for a
 * header value (a ByteString: one char per byte, as received).
 * @returns The escaped value.
 *
 * @example Usage
 * ```ts
 * import { escapeLogValue } from "./log_values.ts";
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

/**
 * A ByteString as a line's text, for the modes that copy bytes as they are
 * (`ngx_escape_json` and `escape=none` copy every byte above 0x7F): each
 * such byte is held as the lone surrogate U+DC80–U+DCFF, which no decoded
 * text holds, and {@linkcode logLineBytes} writes it back as that one
 * byte, UTF-8 or not (Python's "surrogateescape"). Text (`utf-8`) is
 * written as UTF-8, the bytes it was decoded from.
 */
function asText(value: string, encoding: "utf-8" | "latin1"): string {
  if (encoding === "utf-8" || !/[\x80-\xff]/.test(value)) return value;
  return value.replace(
    /[\x80-\xff]/g,
    (c) => String.fromCharCode(0xdc00 | c.charCodeAt(0)),
  );
}

/**
 * A log line's bytes: its text as UTF-8, except that a lone surrogate
 * U+DC80–U+DCFF (a value's byte held by `escape=json` or `none`) is that
 * one byte, as nginx copies it.
 *
 * @param line The line (its newline too).
 * @returns The bytes to write.
 *
 * @example Usage
 * ```ts
 * import { escapeLogJson, logLineBytes } from "./log_values.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const line = `ä${escapeLogJson("\xff\xc3\xa4", "latin1")}\n`;
 * deepStrictEqual([...logLineBytes(line)], [0xc3, 0xa4, 0xff, 0xc3, 0xa4, 10]);
 * ```
 */
export function logLineBytes(line: string): Uint8Array {
  // A line of decoded text only (every line but one holding such a byte).
  if (line.isWellFormed()) return encoder.encode(line);
  const out = new Uint8Array(line.length * 3);
  let at = 0;
  let from = 0;
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (code < 0xdc80 || code > 0xdcff) continue;
    const before = i === 0 ? 0 : line.charCodeAt(i - 1);
    // The second half of a pair is a character's, not a byte's.
    if (before >= 0xd800 && before <= 0xdbff) continue;
    at += encoder.encodeInto(line.slice(from, i), out.subarray(at)).written;
    out[at++] = code & 0xff;
    from = i + 1;
  }
  at += encoder.encodeInto(line.slice(from), out.subarray(at)).written;
  return out.subarray(0, at);
}

/**
 * Escapes a value as `ngx_escape_json` does (`escape=json`): `"` and `\`
 * get a backslash, control bytes become `\n`, `\r`, `\t`, `\b`, `\f` or
 * `\u00XX`, everything else is copied (a byte above 0x7F as it came: see
 * {@linkcode logLineBytes}).
 *
 * @param value The raw value.
 * @param encoding How `value` holds its bytes (see {@linkcode escapeLogValue}).
 * @returns The escaped value.
 *
 * @example Usage
 * ```ts
 * import { escapeLogJson } from "./log_values.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeLogJson('a"b\n\u0001'), 'a\\"b\\n\\u0001');
 * ```
 */
export function escapeLogJson(
  value: string,
  encoding: "utf-8" | "latin1" = "utf-8",
): string {
  const text = asText(value, encoding);
  // deno-lint-ignore no-control-regex -- control bytes are what is escaped
  if (!/[\x00-\x1f"\\]/.test(text)) return text;
  let out = "";
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (c === '"' || c === "\\") out += `\\${c}`;
    else if (code > 0x1f) out += c;
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (c === "\b") out += "\\b";
    else if (c === "\f") out += "\\f";
    else out += `\\u00${HEX[code >> 4]}${HEX[code & 15]}`;
  }
  return out;
}

/**
 * A value copied as it is (`escape=none`; a byte above 0x7F as it came:
 * see {@linkcode logLineBytes}).
 *
 * @param value The raw value.
 * @param encoding How `value` holds its bytes (see {@linkcode escapeLogValue}).
 * @returns The value as text.
 */
export function unescapedLogValue(
  value: string,
  encoding: "utf-8" | "latin1" = "utf-8",
): string {
  return asText(value, encoding);
}
