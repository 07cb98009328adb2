/**
 * Response bodies after the head is sent: which ones are streams, how many
 * of their bytes the client took (`$body_bytes_sent`).
 *
 * A byte body is written whole by `Deno.serve` on its fast path, so its
 * `Content-Length` is what was sent. A stream may stop early (the client
 * left, the upstream closed or stalled), so it is counted as it goes.
 *
 * @module
 */

import { makeResponse } from "./make_response.ts";

/** Responses made by {@linkcode streamedResponse}. */
const streamed = new WeakSet<Response>();

/**
 * A response whose body is a stream, marked so the access log counts what
 * of it reached the client instead of trusting its `Content-Length`.
 *
 * A 200 with a byte body and a field list is made bare and its fields
 * appended: given fields, `new Response` prepares a native response in Rust
 * and registers it with a `FinalizationRegistry`
 * (`setServeNativeFromHeaders()` in `ext/fetch/23_response.js`, Deno 2.9.6),
 * which costs more than `Deno.serve` then saves, and which any later read of
 * `response.headers` (a TLS answer's framing, `response/tls_one_write.ts`)
 * throws away. A bare 200 takes no native response; appending leaves its
 * fast path, and the fields go to Rust in one op when it is sent.
 *
 * @param body The body; a byte body or `null` is not marked.
 * @param init Status and headers.
 * @returns The response.
 *
 * @example Usage
 * ```ts
 * import { streamedResponse } from "./response_body.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const res = streamedResponse(new TextEncoder().encode("{}"), {
 *   status: 200,
 *   headers: [["content-type", "application/json"], ["x-a", "1"]],
 * });
 * deepStrictEqual([...res.headers], [["content-type", "application/json"], ["x-a", "1"]]);
 * ```
 */
export function streamedResponse(
  body: BodyInit | null,
  init: ResponseInit,
): Response {
  const fields = init.headers;
  if (
    body instanceof Uint8Array && init.status === 200 &&
    init.statusText === undefined && Array.isArray(fields) && fields.length > 0
  ) {
    const response = makeResponse(body, { status: 200 });
    const headers = response.headers;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      if (field.length !== 2) {
        throw new TypeError(
          `Invalid header: length must be 2, but is ${field.length}`,
        );
      }
      headers.append(field[0]!, field[1]!);
    }
    return response;
  }
  const response = makeResponse(body, init);
  if (body instanceof ReadableStream) streamed.add(response);
  return response;
}

/**
 * Tells whether a response was made by {@linkcode streamedResponse} with a
 * stream body (without the `body` getter, which turns a byte body into a
 * stream and takes `Deno.serve` off its fast path).
 *
 * @param response The response.
 * @returns Whether its body is a stream to count.
 */
export function isStreamedResponse(response: Response): boolean {
  return streamed.has(response);
}

/** A body that counts what the client took. */
export interface MeteredBody {
  /** The body to send. */
  body: ReadableStream<Uint8Array>;
  /** Bytes taken so far, chunk framing included when chunked. */
  sent(): number;
}

/**
 * Wraps a body so that each chunk counts once `Deno.serve` asks for the
 * next one (it has taken the chunk for the socket) or reads the end; a
 * chunk pending when the client leaves is not counted. A chunked body
 * counts what goes on the wire as nginx's `$body_bytes_sent` does (its
 * chunked filter runs before the count): `hex CRLF data CRLF` per chunk and
 * `0 CRLF CRLF` at a clean end (RFC 9112 §7.1).
 *
 * @param source The body.
 * @param chunked It goes out with `Transfer-Encoding: chunked`.
 * @returns The body to send and its count.
 *
 * @example Usage
 * ```ts
 * import { meteredBody } from "./response_body.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const m = meteredBody(ReadableStream.from([new Uint8Array(13)]), true);
 * await new Response(m.body).arrayBuffer();
 * strictEqual(m.sent(), 23);
 * ```
 */
export function meteredBody(
  source: ReadableStream<Uint8Array>,
  chunked: boolean,
): MeteredBody {
  const reader = source.getReader();
  let sent = 0;
  let pending = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      sent += pending;
      pending = 0;
      let result;
      try {
        result = await reader.read();
      } catch (error) {
        return controller.error(error);
      }
      if (result.done) {
        if (chunked) sent += 5;
        return controller.close();
      }
      const n = result.value.byteLength;
      if (n > 0) pending = chunked ? n + n.toString(16).length + 4 : n;
      controller.enqueue(result.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return { body, sent: () => sent };
}
