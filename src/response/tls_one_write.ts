/**
 * A response on a TLS connection written in one piece. `Deno.serve` sets
 * `TCP_NODELAY` on plain connections only (ext/http/http_next.rs
 * `serve_http_on`), and Deno 2.9.6 has no call that sets it on a TLS one.
 * With Nagle's algorithm on, a second small write waits until the client
 * acknowledges the first, and a client delays that acknowledgement (about
 * 40 ms on Linux, RFC 1122 §4.2.3.2), so the response's head must not go
 * out alone.
 *
 * Deno's HTTP/1.1 writer (libs/http_h1) sends the head alone whenever the
 * body is a stream of known length (`start_fixed_response` writes the head
 * first), and for a body of bytes whenever head and body do not fit its
 * 512-byte buffer together. A chunked response is different: the head
 * stays buffered with the body's chunks and the terminator, up to 64 KiB,
 * until the body has nothing more ready, and goes out in one write.
 * `Transfer-Encoding: chunked` on a response asks for that framing, for a
 * stream and for bytes alike (a byte body stays on Deno's fast path); Deno
 * then drops `Content-Length`, but still sends it to an HTTP/1.0 client
 * and on HEAD, and drops `Transfer-Encoding` on HTTP/2, whose writer (h2)
 * sends a body past 1 KiB in a write of its own whatever it is given. A
 * response cannot tell a stream from bytes without turning the bytes into
 * a stream, so every response with a body is framed so.
 *
 * A handler that makes a response from a field list can ask for the framing
 * before the response is made ({@linkcode ONE_WRITE_FIELD},
 * {@linkcode framedInOnePiece}): `Deno.serve` prepares the head of a
 * response with a body in memory when it is made, and setting a field on
 * it afterwards throws that away (`response/field_list.ts`).
 *
 * @module
 */

/**
 * The field {@linkcode writeInOnePiece} adds, for a field list a response
 * with a body is to be made from (never on HEAD, 1xx, 204, 304 or an
 * empty body, as there).
 */
export const ONE_WRITE_FIELD: readonly [string, string] = Object.freeze(
  [
    "transfer-encoding",
    "chunked",
  ] as const,
);

/**
 * The mark of a response made with {@linkcode ONE_WRITE_FIELD} among its
 * fields: a property of its own, as a `WeakSet` of them cost about 0.8 µs
 * per response (an ephemeron table's insert and its sweep) against 0.1
 * (a loop of cloned 2 KB answers).
 */
const FRAMED: unique symbol = Symbol("framed in one piece");

/** A response that may carry the mark. */
type Markable = Response & { [FRAMED]?: true };

/**
 * Marks a response made with {@linkcode ONE_WRITE_FIELD} among its fields,
 * so {@linkcode writeInOnePiece} leaves its fields alone.
 *
 * @param response The response.
 *
 * @example Usage
 * ```ts
 * import { framedInOnePiece, ONE_WRITE_FIELD, writeInOnePiece } from "./tls_one_write.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const page = new Response("x".repeat(2048), {
 *   headers: [["content-length", "2048"], [...ONE_WRITE_FIELD]],
 * });
 * framedInOnePiece(page);
 * writeInOnePiece("GET", page); // nothing to do
 * strictEqual(page.headers.get("transfer-encoding"), "chunked");
 * ```
 */
export function framedInOnePiece(response: Response): void {
  (response as Markable)[FRAMED] = true;
}

/**
 * Asks `Deno.serve` to write a response to an HTTP/1.x request on a TLS
 * connection in one piece (see the module's note) by adding
 * `Transfer-Encoding: chunked`, unless it has no body: HEAD, 1xx, 204, 304,
 * `Content-Length: 0`. `Content-Length` stays among the fields (the access
 * log's `$sent_http_content_length`); Deno does not send it beside
 * chunked framing. A response whose fields cannot change is left as it is.
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
 * const head = new Response(null, { headers: { "content-length": "2048" } });
 * writeInOnePiece("HEAD", head);
 * strictEqual(head.headers.get("transfer-encoding"), null);
 * ```
 */
export function writeInOnePiece(method: string, response: Response): void {
  if ((response as Markable)[FRAMED] === true) return;
  const status = response.status;
  if (
    method === "HEAD" || status < 200 || status === 204 || status === 304
  ) {
    return;
  }
  const headers = response.headers;
  if (headers.get("content-length") === "0") return;
  try {
    headers.set("transfer-encoding", "chunked");
  } catch {
    // Immutable fields (Response.error(), Response.redirect()): no body
    // worth a second write.
  }
}
