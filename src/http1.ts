/**
 * HTTP/1.1 message framing for the upstream leg, as pure functions: the
 * request head the gateway writes, the response head it parses, and chunked
 * decoding (RFC 9112). The connection handling lives in
 * `upstream_client.ts`; keeping the byte rules here makes them table-testable.
 *
 * @module
 */

import { byteStringFromBytes, writeByteString } from "./byte_string.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("latin1");

/** The largest response head accepted; nginx's `proxy_buffer_size` is one page. */
export const MAX_RESPONSE_HEAD = 64 * 1024;

/** How the request body is framed. */
export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" };

/** Options for {@linkcode serializeRequestHead}. */
export interface RequestHeadOptions {
  /** The method. */
  method: string;
  /** The path and query, starting with `/`. */
  path: string;
  /** The `Host` value (nginx's `$proxy_host`). */
  host: string;
  /** The other header fields, already filtered. */
  headers: readonly (readonly [string, string])[];
  /** How the body is framed. */
  framing: BodyFraming;
}

/**
 * Serializes an HTTP/1.1 request head: request line, `Host`, the framing
 * field, then the others, like nginx's `ngx_http_proxy_create_request`.
 *
 * @param options The head's parts.
 * @returns The bytes, ending with the blank line.
 *
 * @example Usage
 * ```ts
 * import { serializeRequestHead } from "./http1.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const head = serializeRequestHead({
 *   method: "POST",
 *   path: "/loginms",
 *   host: "127.0.0.1:8080",
 *   headers: [["content-type", "application/json"]],
 *   framing: { kind: "length", length: 2 },
 * });
 * strictEqual(
 *   new TextDecoder().decode(head),
 *   "POST /loginms HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 2\r\ncontent-type: application/json\r\n\r\n",
 * );
 * ```
 */
export function serializeRequestHead(options: RequestHeadOptions): Uint8Array {
  const line = requestLine(options);
  const fields = fieldLines(options);
  // Room for the worst case: three UTF-8 bytes per char of the line.
  const bytes = new Uint8Array(line.length * 3 + fields.length);
  return bytes.subarray(0, encodeHead(line, fields, bytes));
}

/**
 * Writes the head {@linkcode serializeRequestHead} makes into `into`, so a
 * connection can reuse one buffer for every request instead of allocating
 * two (the head, then head and body together) per request.
 *
 * @param options The head's parts.
 * @param into Where to write, from index 0.
 * @returns The bytes written, or -1 when the head does not fit (nothing
 * meaningful is left in `into` then).
 *
 * @example Usage
 * ```ts
 * import { writeRequestHead } from "./http1.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const options = {
 *   method: "GET",
 *   path: "/",
 *   host: "h",
 *   headers: [],
 *   framing: { kind: "none" as const },
 * };
 * strictEqual(writeRequestHead(options, new Uint8Array(64)), 27);
 * strictEqual(writeRequestHead(options, new Uint8Array(8)), -1);
 * ```
 */
export function writeRequestHead(
  options: RequestHeadOptions,
  into: Uint8Array,
): number {
  return encodeHead(requestLine(options), fieldLines(options), into);
}

/**
 * Writes the line as UTF-8 and the fields one byte per char; the bytes
 * written, or -1 when they do not fit.
 */
function encodeHead(line: string, fields: string, into: Uint8Array): number {
  // One native encode; it is exact when every char is ASCII, which shows as
  // one byte per char. Otherwise the fields are redone byte per char.
  const head = line + fields;
  const { read, written } = encoder.encodeInto(head, into);
  if (written === head.length && read === head.length) return written;
  const lineBytes = encoder.encodeInto(line, into);
  if (lineBytes.read < line.length) return -1;
  if (lineBytes.written + fields.length > into.length) return -1;
  writeByteString(fields, into, lineBytes.written);
  return lineBytes.written + fields.length;
}

/**
 * The request line, to be encoded as UTF-8: `Deno.serve` decodes the
 * target's bytes as UTF-8 (and answers 400 to invalid ones), so encoding
 * gives back the bytes the client sent.
 */
function requestLine(options: RequestHeadOptions): string {
  return `${options.method} ${options.path} HTTP/1.1\r\n`;
}

/** `Host`, the framing field and the others, ending with the blank line. */
function fieldLines(options: RequestHeadOptions): string {
  let head = `Host: ${options.host}\r\n`;
  const f = options.framing;
  if (f.kind === "length") head += `Content-Length: ${f.length}\r\n`;
  else if (f.kind === "chunked") head += "Transfer-Encoding: chunked\r\n";
  const fields = options.headers;
  for (let i = 0; i < fields.length; i++) {
    head += `${fields[i]![0]}: ${fields[i]![1]}\r\n`;
  }
  return `${head}\r\n`;
}

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

/** Why a response head was rejected, in nginx's words. */
export class InvalidResponseError extends Error {
  /**
   * @param message nginx's message, e.g. `upstream sent too big header`.
   */
  constructor(message: string) {
    super(message);
    this.name = "InvalidResponseError";
  }
}

function indexOfHeadEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (
      bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 &&
      bytes[i - 3] === 13
    ) return i + 1;
  }
  return -1;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_IN_LINE = /\0|\r(?!\n)|(?<!\r)\n/;

/**
 * Parses a response head from the bytes read so far.
 *
 * @param bytes Everything read from the connection for this response.
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
export function parseResponseHead(bytes: Uint8Array): ResponseHead | null {
  const end = indexOfHeadEnd(bytes);
  if (end < 0) {
    if (bytes.length > MAX_RESPONSE_HEAD) {
      throw new InvalidResponseError("upstream sent too big header");
    }
    // Reject a garbage status line early rather than waiting for 64 KiB.
    if (bytes.length >= 5 && decoder.decode(bytes.subarray(0, 5)) !== "HTTP/") {
      throw new InvalidResponseError("upstream sent no valid HTTP/1.0 header");
    }
    return null;
  }
  if (end > MAX_RESPONSE_HEAD) {
    throw new InvalidResponseError("upstream sent too big header");
  }
  // One char per byte, so each value leaves for the client as sent.
  const text = byteStringFromBytes(bytes.subarray(0, end - 4));
  // NUL, or CR or LF other than as a line end, is checked per line only
  // when the head has one (one scan of the text instead of a test per line).
  const suspect = BAD_IN_LINE.test(text);
  let lineEnd = text.indexOf("\r\n");
  if (lineEnd < 0) lineEnd = text.length;
  if (suspect && /[\0\r\n]/.test(text.slice(0, lineEnd))) {
    throw new InvalidResponseError("upstream sent no valid HTTP/1.0 header");
  }
  const status = statusLine(text, lineEnd);
  // Fields are cut straight out of the text (no array of lines): this runs
  // for every proxied response.
  const fields: [string, string][] = [];
  while (lineEnd < text.length) {
    const start = lineEnd + 2;
    lineEnd = text.indexOf("\r\n", start);
    if (lineEnd < 0) lineEnd = text.length;
    const colon = text.indexOf(":", start);
    const name = colon > start && colon < lineEnd
      ? text.slice(start, colon)
      : "";
    if (
      !TOKEN.test(name) ||
      (suspect && /[\0\r\n]/.test(text.slice(start, lineEnd)))
    ) {
      // Includes obs-fold continuation lines (RFC 9112 §5.2).
      throw new InvalidResponseError(
        `upstream sent invalid header: "${text.slice(start, lineEnd)}"`,
      );
    }
    fields.push([name, trimOws(text, colon + 1, lineEnd)]);
  }
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

/** A field value without leading and trailing SP and HTAB (RFC 9110 §5.5). */
function trimOws(text: string, start: number, end: number): string {
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** How the response body is delimited. */
export type ResponseFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

/**
 * Decides how a response body is delimited (RFC 9112 §6.3).
 *
 * @param head The parsed head.
 * @param method The request method (a HEAD answer has no body).
 * @returns The framing.
 * @throws {InvalidResponseError} On a malformed or conflicting length.
 *
 * @example Usage
 * ```ts
 * import { responseFraming } from "./http1.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const head = { version: "HTTP/1.1", status: 200, reason: "OK", fields: [["Content-Length", "5"]] as [string, string][], headLength: 0 };
 * deepStrictEqual(responseFraming(head, "GET"), { kind: "length", length: 5 });
 * ```
 */
export function responseFraming(
  head: ResponseHead,
  method: string,
): ResponseFraming {
  if (
    method === "HEAD" || head.status < 200 || head.status === 204 ||
    head.status === 304
  ) return { kind: "none" };
  let te: string | undefined;
  let length: string | undefined;
  for (const [name, value] of head.fields) {
    const n = name.toLowerCase();
    if (n === "transfer-encoding") te = te ? `${te}, ${value}` : value;
    else if (n === "content-length") {
      if (length !== undefined && length !== value) {
        throw new InvalidResponseError(
          `upstream sent duplicate header line: "${name}: ${value}", previous value: "Content-Length: ${length}"`,
        );
      }
      length = value;
    }
  }
  if (te !== undefined) {
    if (/(?:^|,)\s*chunked\s*$/i.test(te)) return { kind: "chunked" };
    return { kind: "close" };
  }
  if (length !== undefined) {
    if (!/^\d{1,15}$/.test(length)) {
      throw new InvalidResponseError(
        `upstream sent invalid "Content-Length" header: "Content-Length: ${length}"`,
      );
    }
    return { kind: "length", length: Number(length) };
  }
  return { kind: "close" };
}

/**
 * Tells whether the connection may carry another request after this
 * response: HTTP/1.1 without `Connection: close`.
 *
 * @param head The parsed head.
 * @returns Whether to keep the connection.
 */
export function keepsAlive(head: ResponseHead): boolean {
  if (head.version !== "HTTP/1.1") return false;
  for (const [name, value] of head.fields) {
    if (name.toLowerCase() === "connection" && /\bclose\b/i.test(value)) {
      return false;
    }
  }
  return true;
}

/** Thrown by {@linkcode ChunkedDecoder} on malformed chunked framing. */
export class ChunkedFormatError extends Error {
  /** @param message What is wrong. */
  constructor(message: string) {
    super(message);
    this.name = "ChunkedFormatError";
  }
}

/**
 * An incremental chunked-body decoder (RFC 9112 §7.1): feed it the bytes as
 * they arrive, get the payload out. Chunk extensions and trailers are
 * skipped.
 */
export class ChunkedDecoder {
  #state: "size" | "data" | "data-crlf" | "trailer" | "done" = "size";
  #line = "";
  #left = 0;

  /** Whether the last chunk and trailers have been read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /**
   * Decodes the next bytes.
   *
   * @param bytes Bytes read from the connection.
   * @returns The payload pieces found, and how many input bytes were used
   * (fewer than given only once the body is done).
   * @throws {ChunkedFormatError} On malformed framing.
   *
   * @example Usage
   * ```ts
   * import { ChunkedDecoder } from "./http1.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const d = new ChunkedDecoder();
   * const { data } = d.push(new TextEncoder().encode("5\r\nhello\r\n0\r\n\r\n"));
   * strictEqual(new TextDecoder().decode(data[0]), "hello");
   * strictEqual(d.done, true);
   * ```
   */
  push(bytes: Uint8Array): { data: Uint8Array[]; used: number } {
    const data: Uint8Array[] = [];
    let i = 0;
    while (i < bytes.length && this.#state !== "done") {
      if (this.#state === "data") {
        const n = Math.min(this.#left, bytes.length - i);
        data.push(bytes.subarray(i, i + n));
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = "data-crlf";
        continue;
      }
      const byte = bytes[i++]!;
      if (byte !== 10) {
        this.#line += String.fromCharCode(byte);
        if (this.#line.length > 4096) {
          throw new ChunkedFormatError("chunk line too long");
        }
        continue;
      }
      const line = this.#line.endsWith("\r")
        ? this.#line.slice(0, -1)
        : this.#line;
      this.#line = "";
      if (this.#state === "data-crlf") {
        if (line !== "") {
          throw new ChunkedFormatError("missing CRLF after chunk");
        }
        this.#state = "size";
      } else if (this.#state === "size") {
        const m = line.match(/^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/);
        if (!m) throw new ChunkedFormatError(`invalid chunk size "${line}"`);
        this.#left = parseInt(m[1]!, 16);
        this.#state = this.#left === 0 ? "trailer" : "data";
      } else if (this.#state === "trailer") {
        if (line === "") this.#state = "done";
      }
    }
    return { data, used: i };
  }
}
