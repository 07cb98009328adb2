/**
 * HTTP/1.1 response heads from the upstream, as pure functions: where the
 * head ends, its status line, its fields (`field_line_parser.ts`) (RFC
 * 9112). Body framing and keep-alive are read by `response_framing.ts`, the
 * request head is written by `request_head.ts`, chunked bodies are decoded
 * by `chunked_decoder.ts`, and the connection handling lives in
 * `upstream/client.ts`; keeping the byte rules apart makes them
 * table-testable.
 *
 * @module
 */

import { byteStringFromBytes } from "../runtime/mod.ts";
import {
  BAD_IN_LINE,
  InvalidResponseError,
  lineEnd,
  oddBytes,
  parseFieldLines,
} from "./field_line_parser.ts";

/** The largest response head by default: nginx's `proxy_buffer_size`, one memory page. */
export const DEFAULT_HEAD_BUFFER = 4096;

/** A parsed response head. */
export interface ResponseHead {
  /** `HTTP/1.0` or `HTTP/1.1`. */
  version: string;
  /** The status code. */
  status: number;
  /** The reason phrase, kept as the upstream sent it. */
  reason: string;
  /** The fields, in order, with names as sent. */
  fields: [string, string][];
  /** How many bytes of the input the head used. */
  headLength: number;
}

/**
 * Where the head ends: after the first empty line. Lines end in LF with an
 * optional CR before it, as nginx's `ngx_http_parse_status_line` and
 * `ngx_http_parse_header_line` accept (RFC 9112 §2.2 allows a bare LF).
 * The search starts two bytes before `from`, where an end split across
 * reads may begin.
 */
export function indexOfHeadEnd(bytes: Uint8Array, from: number): number {
  let i = bytes.indexOf(10, from > 2 ? from - 2 : 0);
  while (i >= 0 && i + 1 < bytes.length) {
    const next = bytes[i + 1];
    if (next === 10) return i + 2;
    if (next === 13 && i + 2 < bytes.length && bytes[i + 2] === 10) {
      return i + 3;
    }
    i = bytes.indexOf(10, i + 1);
  }
  return -1;
}

/**
 * Parses a response head from the bytes read so far.
 *
 * @param bytes Everything read from the connection for this response.
 * @param bufferSize nginx's `proxy_buffer_size`: a head that does not fit
 * is "too big" (`ngx_http_upstream_process_header`).
 * @param searched How many bytes of `bytes` an earlier call already found
 * no end of the head in (it returned `null`): a head that arrives a few
 * bytes per read is searched once, not once per read (quadratic in the
 * head's size).
 * @returns The head, or `null` if more bytes are needed.
 * @throws {InvalidResponseError} On a malformed or oversized head, with
 * nginx's message for it.
 *
 * @example Usage
 * ```ts
 * import { parseResponseHead } from "./http1.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const head = parseResponseHead(new TextEncoder().encode(
 *   "HTTP/1.1 200 Everything Fine\r\nContent-Length: 2\r\n\r\nok",
 * ));
 * strictEqual(head?.reason, "Everything Fine");
 * strictEqual(head?.headLength, 51);
 * ```
 */
export function parseResponseHead(
  bytes: Uint8Array,
  bufferSize: number = DEFAULT_HEAD_BUFFER,
  searched = 0,
): ResponseHead | null {
  const end = indexOfHeadEnd(bytes, searched);
  if (end < 0 || end > bufferSize) {
    if (end > bufferSize || bytes.length >= bufferSize) {
      throw new InvalidResponseError("upstream sent too big header");
    }
    // Reject a garbage status line early rather than waiting for the buffer.
    if (
      bytes.length >= 5 && byteStringFromBytes(bytes.subarray(0, 5)) !== "HTTP/"
    ) {
      throw new InvalidResponseError("upstream sent no valid HTTP/1.0 header");
    }
    return null;
  }
  // One char per byte, so each value leaves for the client as sent.
  const text = byteStringFromBytes(bytes.subarray(0, end));
  // NUL or a stray CR is looked for only when the head has one (one scan
  // of the text instead of a test per line).
  const odd = oddBytes(bytes, end);
  const suspect = odd && BAD_IN_LINE.test(text);
  const next = text.indexOf("\n") + 1;
  const statusEnd = lineEnd(text, next);
  if (suspect && /[\0\r]/.test(text.slice(0, statusEnd))) {
    throw new InvalidResponseError("upstream sent no valid HTTP/1.0 header");
  }
  const status = statusLine(text, statusEnd);
  const fields = parseFieldLines(text, next, odd);
  return { ...status, fields, headLength: end };
}

/**
 * `HTTP/1.x NNN reason`, checked by hand rather than by a regular
 * expression whose match array and groups are garbage per response.
 */
function statusLine(
  text: string,
  end: number,
): { version: string; status: number; reason: string } {
  const version = text.slice(0, 8);
  const code = Number(text.slice(9, 12));
  if (
    (version !== "HTTP/1.1" && version !== "HTTP/1.0") ||
    text.charCodeAt(8) !== 0x20 || !DIGITS3.test(text.slice(9, 12)) ||
    (end > 12 && text.charCodeAt(12) !== 0x20) || end < 12
  ) {
    throw new InvalidResponseError("upstream sent no valid HTTP/1.0 header");
  }
  return { version, status: code, reason: end > 13 ? text.slice(13, end) : "" };
}

const DIGITS3 = /^\d{3}$/;
