/**
 * `$request_length` (ngx_http_variable_request_length: `r->request_length`):
 * the bytes of the request line and of every header line as they came,
 * with the blank line (ngx_http_process_request_line and
 * ngx_http_process_request_headers grow it by each line read), and each
 * body byte read (ngx_http_read_client_request_body; a body discarded
 * unread adds nothing). `Deno.serve` gives no raw head, so it is counted
 * from what it keeps: the request line as logged (its method, target and
 * version as sent) and each field line as received, `Name: value` and
 * CRLF (`Headers` keeps the lines apart, names in their case, values
 * without the spaces around them: README request-length). Computed only
 * for a line that reads it.
 *
 * Where the count differs from nginx's: spaces around a value other than
 * the one after the colon (`Host:t` counts a byte more, `Host:  t` one
 * fewer); a line ended by a bare LF (counted as CRLF); a chunked body's
 * framing (its data alone: `5`, CRLF, `hello`, CRLF, `0`, CRLF, CRLF counts
 * 5, nginx 15); an absolute-form request line (logged, and counted, in
 * origin form); HTTP/2 (the HTTP/1.1 form, where nginx counts the
 * HPACK-coded fields); a client gone mid-body (the bytes Deno.serve handed
 * over before it saw the close; what came with the close is lost with the
 * connection); a head refused as too large (every line; nginx those before
 * the refused one); a `map` of it read through another name alone (0: only
 * a `log_format` or `if=` that names it makes the count).
 *
 * @module
 */

const encoder = new TextEncoder();

/** CRLF after the request line, and the blank line that ends the head. */
const LINE_END = 2;
/** `: ` and CRLF around a field's value. */
const FIELD_FRAME = 4;

/**
 * The bytes of the request's head as nginx counts them: the request line
 * and CRLF, each field line as `Name: value` and CRLF, the blank line.
 *
 * @param requestLine The request line as logged (UTF-8 text).
 * @param fields Each field line as received, `[name, value]` (ByteStrings:
 * one byte a character); `null` when nginx had read none (a request refused
 * at its request line counts that line alone).
 * @returns The head's size in bytes.
 *
 * @example Usage
 * ```ts
 * import { requestHeadBytes } from "./request_length.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * // "GET / HTTP/1.1\r\n", "Host: t\r\n", "X-A: 1\r\n", "X-A: 2\r\n", "\r\n"
 * strictEqual(
 *   requestHeadBytes("GET / HTTP/1.1", [["Host", "t"], ["X-A", "1"], ["X-A", "2"]]),
 *   16 + 9 + 8 + 8 + 2,
 * );
 * strictEqual(requestHeadBytes("GET / HTTP/1.1", null), 16);
 * ```
 */
export function requestHeadBytes(
  requestLine: string,
  fields: readonly unknown[] | null,
): number {
  // A line of printable ASCII is as long in bytes; other text (a target
  // Deno decoded) is counted in its UTF-8 bytes.
  let bytes =
    (!/[^\x20-\x7e]/.test(requestLine)
      ? requestLine.length
      : encoder.encode(requestLine).length) + LINE_END;
  if (fields === null) return bytes;
  for (const line of fields) {
    if (!Array.isArray(line) || line.length !== 2) continue;
    bytes += String(line[0]).length + String(line[1]).length + FIELD_FRAME;
  }
  return bytes + LINE_END;
}

/**
 * A request's field lines as a list, for {@linkcode requestHeadBytes}, when
 * `Headers` does not show its lines as received (a Deno release that keeps
 * them otherwise): its joined fields, a name sent on several lines then
 * counted as one line.
 *
 * @param headers The request's fields, readable now.
 * @returns `[name, value]` of each field.
 *
 * @example Usage
 * ```ts
 * import { joinedFieldLines } from "./request_length.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(joinedFieldLines(new Headers({ a: "1" })), [["a", "1"]]);
 * ```
 */
export function joinedFieldLines(headers: Headers): [string, string][] {
  const lines: [string, string][] = [];
  headers.forEach((value, name) => lines.push([name, value]));
  return lines;
}
