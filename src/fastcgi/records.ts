/**
 * FastCGI 1.0 records as nginx writes and reads them
 * (`ngx_http_fastcgi_create_request`, `ngx_http_fastcgi_process_record`):
 * the request's `BEGIN_REQUEST` (responder), one `PARAMS` record of
 * name-value pairs with 1- or 4-byte lengths, an empty `PARAMS`, the body in
 * `STDIN` records of at most 32 KiB padded to 8 bytes, an empty `STDIN`.
 * The reply's records are decoded by `record_decoder.ts`.
 *
 * @module
 */

/** Record types (FastCGI 1.0 §8). */
export const FCGI_BEGIN_REQUEST = 1;
/** The end of a request, sent by the application. */
export const FCGI_END_REQUEST = 3;
/** The request's parameters. */
export const FCGI_PARAMS = 4;
/** The request's body. */
export const FCGI_STDIN = 5;
/** The application's response. */
export const FCGI_STDOUT = 6;
/** The application's error output. */
export const FCGI_STDERR = 7;

/** The most a `STDIN` record carries, as nginx splits a body (32 KiB). */
export const STDIN_CHUNK = 32 * 1024;

/** The largest `PARAMS` record nginx sends (its length field is 16 bits). */
export const MAX_PARAMS_LENGTH = 65535;

/** A record header: version 1, request id 1, as nginx sends every record. */
function header(
  out: Uint8Array,
  at: number,
  type: number,
  length: number,
  padding: number,
): void {
  out[at] = 1;
  out[at + 1] = type;
  out[at + 2] = 0;
  out[at + 3] = 1;
  out[at + 4] = (length >> 8) & 0xff;
  out[at + 5] = length & 0xff;
  out[at + 6] = padding;
  out[at + 7] = 0;
}

/** Padding to the next multiple of 8, as nginx pads `PARAMS` and `STDIN`. */
function paddingOf(length: number): number {
  return (8 - (length % 8)) % 8;
}

/** The byte length of one name-value pair's length field. */
function lengthSize(n: number): number {
  return n > 127 ? 4 : 1;
}

function putLength(out: Uint8Array, at: number, n: number): number {
  if (n > 127) {
    out[at] = ((n >>> 24) & 0x7f) | 0x80;
    out[at + 1] = (n >>> 16) & 0xff;
    out[at + 2] = (n >>> 8) & 0xff;
    out[at + 3] = n & 0xff;
    return at + 4;
  }
  out[at] = n;
  return at + 1;
}

/**
 * The request's head: `BEGIN_REQUEST`, the parameters in one `PARAMS`
 * record, the empty `PARAMS` that ends them.
 *
 * @param params Name-value pairs as bytes (names and values are byte strings).
 * @param keepConn `fastcgi_keep_conn on`: the flag asking to keep the connection.
 * @returns The bytes, or the length nginx refuses (`fastcgi request record
 * is too big: N`) when the pairs do not fit one record.
 *
 * @example Usage
 * ```ts
 * import { encodeRequestHead } from "./records.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const enc = new TextEncoder();
 * const head = encodeRequestHead([[enc.encode("A"), enc.encode("b")]], false);
 * strictEqual(head instanceof Uint8Array && head.length, 8 + 8 + 8 + 8 + 8);
 * ```
 */
export function encodeRequestHead(
  params: readonly (readonly [Uint8Array, Uint8Array])[],
  keepConn: boolean,
): Uint8Array | { tooBig: number } {
  let length = 0;
  for (const [name, value] of params) {
    length += lengthSize(name.length) + lengthSize(value.length) +
      name.length + value.length;
  }
  if (length > MAX_PARAMS_LENGTH) return { tooBig: length };
  const padding = paddingOf(length);
  const out = new Uint8Array(16 + 8 + length + padding + 8);
  header(out, 0, FCGI_BEGIN_REQUEST, 8, 0);
  // Role FCGI_RESPONDER (1); flags FCGI_KEEP_CONN (1) when asked.
  out[9] = 1;
  out[10] = keepConn ? 1 : 0;
  header(out, 16, FCGI_PARAMS, length, padding);
  let at = 24;
  for (const [name, value] of params) {
    at = putLength(out, at, name.length);
    at = putLength(out, at, value.length);
    out.set(name, at);
    at += name.length;
    out.set(value, at);
    at += value.length;
  }
  header(out, at + padding, FCGI_PARAMS, 0, 0);
  return out;
}

/**
 * Body bytes as `STDIN` records of at most {@linkcode STDIN_CHUNK} bytes,
 * each padded to 8 bytes; an empty input gives the empty `STDIN` that ends
 * the body.
 *
 * @param bytes Part of the body, or nothing for the end.
 * @returns The records.
 *
 * @example Usage
 * ```ts
 * import { stdinRecords } from "./records.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(stdinRecords(new Uint8Array(0)), new Uint8Array([1, 5, 0, 1, 0, 0, 0, 0]));
 * deepStrictEqual(stdinRecords(new Uint8Array(3)).length, 8 + 3 + 5);
 * ```
 */
export function stdinRecords(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 0) {
    const end = new Uint8Array(8);
    header(end, 0, FCGI_STDIN, 0, 0);
    return end;
  }
  let size = 0;
  for (let at = 0; at < bytes.length; at += STDIN_CHUNK) {
    const n = Math.min(STDIN_CHUNK, bytes.length - at);
    size += 8 + n + paddingOf(n);
  }
  const out = new Uint8Array(size);
  let pos = 0;
  for (let at = 0; at < bytes.length; at += STDIN_CHUNK) {
    const n = Math.min(STDIN_CHUNK, bytes.length - at);
    const padding = paddingOf(n);
    header(out, pos, FCGI_STDIN, n, padding);
    out.set(bytes.subarray(at, at + n), pos + 8);
    pos += 8 + n + padding;
  }
  return out;
}
