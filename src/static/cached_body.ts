/**
 * A cached file's contents as the static handler sends them
 * ({@linkcode CachedBody}), and the response that carries them whole
 * without a copy per response where the runtime allows it.
 *
 * @module
 */

import { makeResponse } from "../response/mod.ts";
import type { AnswerTemplate } from "./answer_template.ts";
import type { Validators } from "./validators.ts";

/** A file's contents as the static handler sends them. */
export interface CachedBody {
  /** The file's bytes; ranges are cut from them. */
  bytes: Uint8Array<ArrayBuffer>;
  /**
   * The validators of the `stat` it was read with, made once (`null` for
   * a file read while it changed, which is not kept).
   */
  validators: Validators | null;
  /**
   * The whole file as a body `Deno.serve` sends without copying it, or
   * `null` when it cannot be used: see {@linkcode wholeFileResponse}.
   */
  stream: ReadableStream<Uint8Array> | null;
  /**
   * The whole file's last answer, cloned for the next request with the same
   * status and fields (`static/answer_template.ts`); `null` until one is made.
   */
  template: AnswerTemplate | null;
}

/**
 * A stream `Deno.serve` can send any number of times without reading it.
 * `new Response(bytes)` keeps a copy of the bytes as its static body, and
 * the `body` stream made from such a response is remembered by Deno as that
 * static body (`extractBody()` in `ext/fetch/22_body.js`, Deno 2.9.6), so a
 * `Response` built on the stream takes the same static body again: no copy,
 * and the stream itself is never locked or read.
 *
 * @param bytes A file's bytes.
 * @returns The stream.
 */
export function sharedStream(
  bytes: Uint8Array<ArrayBuffer>,
): ReadableStream<Uint8Array> {
  return makeResponse(bytes).body!;
}

/**
 * A response carrying a cached file whole, without a per-response copy when
 * the runtime allows it.
 *
 * `Deno.serve` copies a `Uint8Array` body into every response (the
 * `slice()` in `extractBody()`), and writes a string body by copying it
 * into a new buffer; both are a 200 KB `memcpy` per response of a 200 KB
 * script. A body stream taken from a `Response` over the same bytes is
 * resolved back to that response's static body instead, so nothing is
 * copied and hyper writes from the one buffer (scripts/README.md has the
 * figures). Should a runtime read the stream instead, it would be locked
 * or disturbed after one response: then the bytes are sent (one copy each,
 * still correct) and the stream is given up.
 *
 * @param body The cached file.
 * @param init Status and headers.
 * @returns The response.
 *
 * @example Usage
 * ```ts
 * import { StaticCache } from "./cache.ts";
 * import { wholeFileResponse } from "./cached_body.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.js`, "let a = 1;");
 * using file = Deno.openSync(`${dir}/a.js`);
 * const cached = new StaticCache().load(`${dir}/a.js`, file, file.statSync(), dir)!;
 * strictEqual(await wholeFileResponse(cached, {}).text(), "let a = 1;");
 * strictEqual(await wholeFileResponse(cached, {}).text(), "let a = 1;");
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function wholeFileResponse(
  body: CachedBody,
  init: ResponseInit,
): Response {
  const stream = body.stream;
  if (stream !== null && !stream.locked) {
    try {
      return makeResponse(stream, init);
    } catch {
      // Disturbed by a runtime that read it: fall through to the bytes. A
      // bad `init` throws again below, so no other error is hidden.
    }
  }
  body.stream = null;
  return makeResponse(body.bytes, init);
}
