/**
 * The request head the gateway writes upstream (RFC 9112 §3, §6): request
 * line, `Host`, the body's framing field, then the client's fields, with the
 * client's bytes kept as they were.
 *
 * @module
 */

import { writeByteString } from "../runtime/mod.ts";

const encoder = new TextEncoder();

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
  /** The request line's version; `1.1` when absent. */
  version?: "1.0" | "1.1" | undefined;
  /** Fields written before the framing field instead of the `Host` line. */
  leading?: readonly (readonly [string, string])[] | undefined;
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
 * import { serializeRequestHead } from "./request_head.ts";
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
 * import { writeRequestHead } from "./request_head.ts";
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
  return `${options.method} ${options.path} HTTP/${
    options.version ?? "1.1"
  }\r\n`;
}

/**
 * The value `$station_peer` stands for in a field the location sets: the
 * server tried, as `host:port`, written per attempt (the built-in
 * configuration's `Host`, so failover keeps each server's own name).
 */
export const PEER_HOST_VALUE = "\x01station-peer\x01";

/** `Host`, the framing field and the others, ending with the blank line. */
function fieldLines(options: RequestHeadOptions): string {
  let head = "";
  const leading = options.leading;
  if (leading === undefined) head = `Host: ${options.host}\r\n`;
  else {
    for (let i = 0; i < leading.length; i++) {
      const value = leading[i]![1];
      head += `${leading[i]![0]}: ${
        value === PEER_HOST_VALUE ? options.host : value
      }\r\n`;
    }
  }
  const f = options.framing;
  if (f.kind === "length") head += `Content-Length: ${f.length}\r\n`;
  else if (f.kind === "chunked") head += "Transfer-Encoding: chunked\r\n";
  const fields = options.headers;
  for (let i = 0; i < fields.length; i++) {
    head += `${fields[i]![0]}: ${fields[i]![1]}\r\n`;
  }
  return `${head}\r\n`;
}
