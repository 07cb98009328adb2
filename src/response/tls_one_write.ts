/**
 * A response on a TLS connection written in one piece. `Deno.serve` sets
 * `TCP_NODELAY` on plain connections only (ext/http/http_next.rs
 * `serve_http_on`), and Deno 2.9.6 has no call that sets it on a TLS one.
 * With Nagle's algorithm on, a second small write waits until the client
 * acknowledges the first, and a client delays that acknowledgement (about
 * 40 ms on Linux, RFC 1122 §4.2.3.2), so the response's head must not go
 * out alone.
 *
 * Deno's HTTP/1.1 writer (libs/http_h1 `poll_write_response_with`) sends a
 * body of known length in the same write as the head only while both fit
 * its 512-byte buffer; past that the head goes first, alone. A chunked
 * response is different: the head stays buffered with the body's chunks
 * and the terminator, up to 64 KiB, until the body has nothing more ready,
 * and goes out in one write. `Transfer-Encoding: chunked` on a response
 * asks for that framing and keeps a byte body on Deno's fast path; Deno
 * drops `Content-Length` then, sends `Content-Length` to an HTTP/1.0
 * client and on HEAD, and drops the field on HTTP/2, whose writer (h2)
 * sends a body past 1 KiB in a write of its own whatever it is given.
 *
 * @module
 */

/** Deno's HTTP/1.1 write buffer (libs/http_h1 `DEFAULT_WRITE_CAPACITY`). */
export const DENO_WRITE_BUFFER = 512;

/**
 * What Deno adds to the fields of a head, at most: the status line with
 * its reason phrase (46), `date` (37), `content-length` (26), `connection`
 * (24) and the blank line, rounded up.
 */
const DENO_HEAD_BYTES = 160;

/**
 * Asks `Deno.serve` to write a response to an HTTP/1.x request on a TLS
 * connection in one piece (see the module's note), by adding
 * `Transfer-Encoding: chunked`, unless it goes in one write as it is: no
 * body (HEAD, 1xx, 204, 304, `Content-Length: 0`), or a head and body
 * that fit Deno's write buffer together. A response whose fields cannot be
 * changed is left as it is.
 *
 * @param method The request's method.
 * @param response The response; its fields may change.
 *
 * @example Usage
 * ```ts
 * import { writeInOnePiece } from "./tls_one_write.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const page = new Response("x".repeat(2048), {
 *   headers: { "content-length": "2048" },
 * });
 * writeInOnePiece("GET", page);
 * strictEqual(page.headers.get("transfer-encoding"), "chunked");
 *
 * const small = new Response("{}", { headers: { "content-length": "2" } });
 * writeInOnePiece("POST", small);
 * strictEqual(small.headers.get("transfer-encoding"), null);
 * ```
 */
export function writeInOnePiece(method: string, response: Response): void {
  const status = response.status;
  if (
    method === "HEAD" || status < 200 || status === 204 || status === 304
  ) {
    return;
  }
  const headers = response.headers;
  const length = headers.get("content-length");
  if (length === "0") return;
  if (length !== null && fitsOneWrite(headers, Number(length))) return;
  try {
    headers.set("transfer-encoding", "chunked");
  } catch {
    // Immutable fields (Response.error(), Response.redirect()): no body
    // worth a second write.
  }
}

/**
 * Whether a head and a body of `length` bytes fit Deno's write buffer: the
 * fields are counted only when the body alone leaves room for a head.
 */
function fitsOneWrite(headers: Headers, length: number): boolean {
  let room = DENO_WRITE_BUFFER - DENO_HEAD_BYTES - length;
  if (!(room >= 0)) return false;
  for (const [name, value] of headers) {
    room -= name.length + value.length + 4;
    if (room < 0) return false;
  }
  return true;
}
