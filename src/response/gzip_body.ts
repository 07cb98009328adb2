/**
 * The gzip filter's compressor (`ngx_http_gzip_body_filter`): a body in
 * memory is deflated in one call; a stream is deflated as the client takes
 * it, one input chunk per read, so memory stays bounded by a chunk and the
 * upstream is read no faster than the client reads (the output stream has
 * no buffer of its own). Output is held until a page of it is ready, as
 * nginx holds a partly filled `gzip_buffers` buffer, unless the body asks
 * for a flush (`proxy_buffering off`: nginx flushes each upstream read with
 * `Z_SYNC_FLUSH`).
 *
 * `node:zlib` is used for its level (`CompressionStream` has none). The
 * deflate window and memory shrink for a small body of known length, as
 * `ngx_http_gzip_filter_memory` shrinks them.
 *
 * @module
 */

import { constants, createGzip, gzipSync, type ZlibOptions } from "node:zlib";

/** nginx holds output until a `gzip_buffers` buffer (one page) is full. */
const OUTPUT_PAGE = 4096;

/** A stream of known length up to this is read whole, then deflated in one call. */
const ONE_CALL_MAX = 64 * 1024;

/**
 * The deflate options for a level and a body length, as
 * `ngx_http_gzip_filter_memory` sizes them: the window halves (and the
 * memory level drops) while the body fits in half of it.
 *
 * @param level `gzip_comp_level`.
 * @param length The body's length, when known.
 * @returns The options for `node:zlib`.
 *
 * @example Usage
 * ```ts
 * import { deflateOptions } from "./gzip_body.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(deflateOptions(1, null), { level: 1, windowBits: 15, memLevel: 8 });
 * deepStrictEqual(deflateOptions(6, 5000), { level: 6, windowBits: 13, memLevel: 6 });
 * ```
 */
export function deflateOptions(
  level: number,
  length: number | null,
): ZlibOptions {
  let windowBits = 15;
  let memLevel = 8;
  if (length !== null && length > 0) {
    // "the actual zlib window size is smaller by 262 bytes"
    while (length < (1 << (windowBits - 1)) - 262) {
      windowBits--;
      memLevel--;
    }
    if (memLevel < 1) memLevel = 1;
  }
  return { level, windowBits, memLevel };
}

/**
 * A body in memory, gzipped in one call.
 *
 * @param bytes The body.
 * @param level `gzip_comp_level`.
 * @returns The gzip member.
 */
export function gzipBytes(bytes: Uint8Array, level: number): Uint8Array {
  return gzipSync(bytes, deflateOptions(level, bytes.length));
}

/** Options for {@linkcode gzipStream}. */
export interface GzipStreamOptions {
  /** `gzip_comp_level`. */
  level: number;
  /** The body's length, when known. */
  length: number | null;
  /** Send what each input chunk gives at once (`proxy_buffering off`). */
  flush: boolean;
}

/**
 * A stream body gzipped as the client reads it. Cancelling the result
 * cancels the source; a failing source fails the result.
 *
 * @param source The body.
 * @param options Level, known length, flushing.
 * @returns The gzipped body.
 *
 * @example Usage
 * ```ts
 * import { gzipStream } from "./gzip_body.ts";
 * import { gunzipSync } from "node:zlib";
 * import { strictEqual } from "node:assert/strict";
 *
 * const source = ReadableStream.from([new TextEncoder().encode("hello ".repeat(100))]);
 * const gz = gzipStream(source, { level: 1, length: null, flush: false });
 * const bytes = new Uint8Array(await new Response(gz).arrayBuffer());
 * strictEqual(gunzipSync(bytes).length, 600);
 * ```
 */
export function gzipStream(
  source: ReadableStream<Uint8Array>,
  options: GzipStreamOptions,
): ReadableStream<Uint8Array> {
  const { length } = options;
  if (length !== null && length <= ONE_CALL_MAX && !options.flush) {
    return wholeThenGzip(source, options.level, length);
  }
  return deflating(source, options);
}

/** Reads a short body of known length whole, then one call (one chunk out). */
function wholeThenGzip(
  source: ReadableStream<Uint8Array>,
  level: number,
  length: number,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Most short bodies come in one read: deflated without a copy.
      let first: Uint8Array | null = null;
      let whole: Uint8Array | null = null;
      let at = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (at + value.byteLength > length) {
            throw new RangeError("Cannot gzip body: longer than its length");
          }
          if (at === 0 && first === null) {
            first = value;
          } else {
            if (whole === null) {
              whole = new Uint8Array(length);
              whole.set(first!, 0);
            }
            whole.set(value, at);
          }
          at += value.byteLength;
        }
      } catch (error) {
        reader.cancel(error).catch(() => {});
        return controller.error(error);
      }
      const body = whole?.subarray(0, at) ?? first ?? new Uint8Array();
      controller.enqueue(gzipBytes(body, level));
      controller.close();
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** Deflates chunk by chunk through one zlib stream. */
function deflating(
  source: ReadableStream<Uint8Array>,
  options: GzipStreamOptions,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let out: Uint8Array[] = [];
  let pending = 0;
  // Made on the first read: a body never read holds no deflate state.
  let made: Gzip | null = null;
  const gzip = (): Gzip => {
    if (made !== null) return made;
    made = createGzip(deflateOptions(options.level, options.length));
    made.on("data", (chunk: Uint8Array) => {
      out.push(chunk);
      pending += chunk.byteLength;
    });
    // Errors reach the awaited callbacks below; this keeps them from
    // being thrown as unhandled.
    made.on("error", () => {});
    return made;
  };
  const take = (): Uint8Array => {
    const joined = out.length === 1 ? out[0]! : concat(out, pending);
    out = [];
    pending = 0;
    return joined;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const z = gzip();
      try {
        while (pending < OUTPUT_PAGE) {
          const { done, value } = await reader.read();
          if (done) {
            await finish(z);
            if (pending > 0) controller.enqueue(take());
            return controller.close();
          }
          if (value.byteLength === 0) continue;
          await write(z, value);
          if (options.flush) {
            await flush(z);
            if (pending > 0) break;
          }
        }
        controller.enqueue(take());
      } catch (error) {
        z.destroy();
        reader.cancel(error).catch(() => {});
        controller.error(error);
      }
    },
    cancel(reason) {
      made?.destroy();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

type Gzip = ReturnType<typeof createGzip>;

function write(z: Gzip, chunk: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    z.write(chunk, (error) => error ? reject(error) : resolve());
  });
}

function flush(z: Gzip): Promise<void> {
  return new Promise((resolve) => z.flush(constants.Z_SYNC_FLUSH, resolve));
}

function finish(z: Gzip): Promise<void> {
  return new Promise((resolve, reject) => {
    z.once("end", resolve);
    z.once("error", reject);
    z.end();
  });
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const joined = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.byteLength;
  }
  return joined;
}
