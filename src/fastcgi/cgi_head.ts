/**
 * The CGI response head a FastCGI application writes to `STDOUT`, read as
 * `ngx_http_fastcgi_process_header` reads it: field lines (the gateway's
 * one field-line parser, `upstream/field_line_parser.ts`) up to an empty
 * line; the status from `Status:` (its first three bytes a number, else
 * `upstream sent invalid status "…"`), else 302 when there is a
 * `Location:`, else 200.
 *
 * @module
 */

import { byteStringFromBytes } from "../runtime/mod.ts";
import {
  indexOfHeadEnd,
  InvalidResponseError,
  oddBytes,
  parseFieldLines,
  type ResponseHead,
} from "../upstream/mod.ts";

const DIGITS = /^\d{3}/;

/**
 * Parses a CGI head from the bytes of `STDOUT` so far.
 *
 * @param bytes The `STDOUT` content received so far (record framing removed).
 * @param searched How many bytes an earlier call found no end in.
 * @returns The head (`headLength` bytes of `bytes`; its `reason` is the
 * status line after the code), or `null` when more bytes are needed.
 * @throws {InvalidResponseError} On a line or status nginx refuses.
 *
 * @example Usage
 * ```ts
 * import { parseCgiHead } from "./cgi_head.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const head = parseCgiHead(new TextEncoder().encode("Status: 404 Not Found\r\nX: 1\r\n\r\nbody"));
 * strictEqual(head?.status, 404);
 * strictEqual(head?.headLength, 31);
 * ```
 */
export function parseCgiHead(
  bytes: Uint8Array,
  searched = 0,
): ResponseHead | null {
  // An empty line first is an empty head (ngx_http_parse_header_line
  // answers "done" at once).
  const empty = bytes[0] === 10
    ? 1
    : bytes[0] === 13 && bytes[1] === 10
    ? 2
    : 0;
  if (empty === 0 && bytes.length < 2) return null;
  const end = empty > 0 ? empty : indexOfHeadEnd(bytes, searched);
  if (end < 0) return null;
  const text = byteStringFromBytes(bytes.subarray(0, end));
  const fields = empty > 0
    ? []
    : parseFieldLines(text, 0, oddBytes(bytes, end));
  let status: string | undefined;
  let location = false;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    if (name.length === 6 && name.toLowerCase() === "status") {
      status ??= fields[i]![1];
    } else if (name.length === 8 && name.toLowerCase() === "location") {
      location = true;
    }
  }
  const head = { version: "HTTP/1.1", fields, headLength: end };
  if (status !== undefined) {
    if (!DIGITS.test(status)) {
      throw new InvalidResponseError(
        `upstream sent invalid status "${status}"`,
      );
    }
    return {
      ...head,
      status: Number(status.slice(0, 3)),
      reason: status.slice(4),
    };
  }
  return location
    ? { ...head, status: 302, reason: "Moved Temporarily" }
    : { ...head, status: 200, reason: "OK" };
}
