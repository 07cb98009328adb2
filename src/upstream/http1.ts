/**
 * HTTP/1.1 response heads from the upstream, as pure functions: parsing,
 * body framing and keep-alive (RFC 9112). The request head is written by
 * `request_head.ts`, chunked bodies are decoded by `chunked_decoder.ts`, and
 * the connection handling lives in `upstream/client.ts`; keeping the byte
 * rules apart makes them table-testable.
 *
 * @module
 */

import { byteStringFromBytes, escapeControls } from "../runtime/mod.ts";
import { escapeErrorLogText } from "../log/mod.ts";

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

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** NUL, or a CR that does not end a line. */
const BAD_IN_LINE = /\0|\r(?!\n)/;
/** A control byte other than the lines' CR LF, tab and NUL (refused above). */
// deno-lint-ignore no-control-regex -- control bytes are what is looked for
const CONTROL_IN_HEAD = /[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const FRAMING_FIELD = /^(?:content-length|transfer-encoding)$/i;

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
 * The field lines of a head (`ngx_http_parse_header_line`), from `next`
 * up to its empty line: one parser for every upstream head, an HTTP
 * response's after its status line and a FastCGI application's CGI head.
 *
 * @param text The head as a byte string (one char per byte), its empty
 * line included.
 * @param next Where the first field line starts.
 * @param odd {@linkcode oddBytes} of the head.
 * @returns The fields, names as sent, values trimmed; one `Content-Type`,
 * the last line's value where the first line was.
 * @throws {InvalidResponseError} On a line nginx refuses, with its message.
 */
export function parseFieldLines(
  text: string,
  next: number,
  odd: boolean,
): [string, string][] {
  // NUL or a stray CR is looked for per line only when the head has one (one
  // scan of the text instead of a test per line).
  const suspect = odd && BAD_IN_LINE.test(text);
  // A control byte in a value (nginx relays it) ends the process in Deno's
  // response writer (a panic, "invalid response header value"): such a
  // value is escaped as the gateway's own fields are, here where every
  // path to the client starts. One scan per head. The framing fields are
  // read, never relayed as they are: kept for nginx's messages about them.
  const controls = odd && CONTROL_IN_HEAD.test(text);
  // Fields are cut straight out of the text (no array of lines): this runs
  // for every proxied response.
  const fields: [string, string][] = [];
  // Where the Content-Type is: a later line replaces its value, as each
  // line replaces r->headers_out.content_type in nginx
  // (ngx_http_upstream_copy_content_type), where a Headers object would
  // join them into one value no client reads.
  let typeAt = -1;
  while (true) {
    const start = next;
    next = text.indexOf("\n", start) + 1;
    const stop = lineEnd(text, next);
    if (stop === start) break; // the empty line
    const colon = text.indexOf(":", start);
    const hasColon = colon >= start && colon < stop;
    const name = text.slice(start, hasColon ? colon : stop);
    if (
      !TOKEN.test(name) ||
      (suspect && /[\0\r]/.test(text.slice(start, stop)))
    ) {
      throw new InvalidResponseError(invalidHeader(text.slice(start, stop)));
    }
    // A line without a colon is a field without a value, as in nginx.
    const value = hasColon ? trimOws(text, colon + 1, stop) : "";
    const field: [string, string] = [
      name,
      controls && !FRAMING_FIELD.test(name) ? escapeControls(value) : value,
    ];
    if (name.length === 12 && name.toLowerCase() === "content-type") {
      if (typeAt >= 0) {
        fields[typeAt] = field;
        continue;
      }
      typeAt = fields.length;
    }
    fields.push(field);
  }
  return fields;
}

/**
 * Whether a head holds what either scan below looks for: NUL, a CR not
 * before LF, or another control byte than tab, CR and LF. One loop over the
 * bytes of every head (cheaper than a regular expression over its text,
 * profiled); the two scans run only when it finds one.
 */
export function oddBytes(bytes: Uint8Array, end: number): boolean {
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b >= 0x20) {
      if (b === 0x7f) return true;
    } else if (b !== 0x09 && b !== 0x0a) {
      if (b !== 0x0d || i + 1 >= end || bytes[i + 1] !== 0x0a) return true;
    }
  }
  return false;
}

/** Where the line that ends before `next` ends, without its CR. */
function lineEnd(text: string, next: number): number {
  return text.charCodeAt(next - 2) === 13 ? next - 2 : next - 1;
}

/**
 * nginx's message for a field line it cannot parse: the line up to the
 * offending byte, then that byte as `\xhh...`
 * (`ngx_http_proxy_process_header`). A byte that is only not a token
 * character (nginx relays those, `Headers` cannot hold them) gets the whole
 * line, its control bytes escaped the same way.
 */
function invalidHeader(line: string): string {
  const colon = line.indexOf(":");
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    const inName = colon < 0 || i <= colon;
    if (
      c === 0 || c === 13 ||
      (inName && (c <= 0x20 || c === 0x7f || (c === 0x3a && i === 0)))
    ) {
      return `upstream sent invalid header: "${
        escapeErrorLogText(line.slice(0, i), "latin1")
      }\\x${c.toString(16).padStart(2, "0")}..."`;
    }
  }
  return `upstream sent invalid header: "${
    escapeErrorLogText(line, "latin1")
  }"`;
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
 * A response's `Transfer-Encoding`, every field joined, or `undefined`. Its
 * presence is the one decision both sides of the proxy read: the body is
 * framed by it, and the upstream's `Content-Length` then describes nothing
 * and is not relayed (RFC 9112 §6.3 rule 3; nginx clears
 * `content_length_n` for a chunked response).
 *
 * @param fields The response's fields, as received.
 * @returns The coding list, or `undefined` without the field.
 *
 * @example Usage
 * ```ts
 * import { transferEncodingOf } from "./http1.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(transferEncodingOf([["Content-Length", "100"], ["Transfer-Encoding", "chunked"]]), "chunked");
 * ```
 */
export function transferEncodingOf(
  fields: readonly (readonly [string, string])[],
): string | undefined {
  let te: string | undefined;
  // By index, not destructured: `[name, value] =` runs the iterator
  // protocol per field (an iterator and its results: 0.6 KB per proxied
  // answer in an allocation profile).
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const name = field[0];
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") {
      te = te === undefined ? field[1] : `${te}, ${field[1]}`;
    }
  }
  return te;
}

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
  let length: string | undefined;
  // Indexed, without destructuring: an iterator and a pair per field are
  // garbage per response (allocation profile of a small POST).
  const fields = head.fields;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    const value = fields[i]![1];
    // The length first: a lower-case copy of every name is garbage per
    // response.
    if (name.length === 14 && name.toLowerCase() === "content-length") {
      if (length !== undefined && length !== value) {
        throw new InvalidResponseError(
          `upstream sent duplicate header line: "${name}: ${
            escapeErrorLogText(value, "latin1")
          }", previous value: "Content-Length: ${
            escapeErrorLogText(length, "latin1")
          }"`,
        );
      }
      length = value;
    }
  }
  const te = transferEncodingOf(head.fields);
  if (te !== undefined) {
    if (/(?:^|,)\s*chunked\s*$/i.test(te)) return { kind: "chunked" };
    // Chunked not last: read to the close (RFC 9112 §6.3 rule 4).
    return { kind: "close" };
  }
  if (length !== undefined) {
    if (!/^\d{1,15}$/.test(length)) {
      throw new InvalidResponseError(
        `upstream sent invalid "Content-Length" header: "Content-Length: ${
          escapeErrorLogText(length, "latin1")
        }"`,
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
  const fields = head.fields;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    if (
      name.length === 10 && name.toLowerCase() === "connection" &&
      /\bclose\b/i.test(fields[i]![1])
    ) {
      return false;
    }
  }
  return true;
}

/**
 * An answer's fields never relayed to the client: nginx ignores
 * `Connection`, `Keep-Alive`, `Transfer-Encoding` and `Content-Length` (it
 * frames the body itself); the gateway also keeps the other hop-by-hop
 * fields (`Upgrade`, `TE`, `Trailer`, `Proxy-Connection`), which describe
 * the upstream's connection, not the client's. For `proxy_pass` and
 * `fastcgi_pass` alike.
 */
export const NEVER_RELAYED: readonly string[] = [
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
];
