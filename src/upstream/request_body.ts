/**
 * Sending a streamed request body upstream, through one reused buffer.
 *
 * `Deno.serve` hands a request body over as a byte stream. Read with the
 * default reader, every chunk is a new 64 KiB `ArrayBuffer`; V8 frees those
 * only when its external-memory heuristic starts a full collection, tens of
 * MiB later, so a large upload grew the gateway's RSS by that much
 * (`deno task bench --gib 1`). Read with a BYOB reader into one
 * buffer per upload, the same memory is filled and written again: nothing
 * is left for the collector. Reusing it is safe because a socket write in
 * Deno has finished with the bytes when its promise settles (unlike a
 * response body chunk, which `Deno.serve` keeps until it is sent).
 *
 * @module
 */

import type { BodyReadTimer } from "./types.ts";
import { GATHER_PIECE, WriteGather } from "./write_gather.ts";

/** Bytes asked for per read, Deno's own chunk size for socket streams. */
const READ_SIZE = 64 * 1024;
/** Room before the data for a chunk-size line: 14 hex digits and CRLF. */
const HEAD_ROOM = 16;
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");

/** Options for {@linkcode sendBody}. */
export interface SendBodyOptions {
  /** Frame the body as chunked (RFC 9112 §7.1); otherwise as it comes. */
  chunked: boolean;
  /** Writes all of the bytes; they may be reused once it settles. */
  write: (bytes: Uint8Array) => Promise<void>;
  /**
   * Wraps an error from reading the client's body (it went away, or a
   * wait passed `timer`'s timeout: then its `timedOut` is set), told the
   * bytes read before it.
   */
  onReadError: (error: unknown, received: number) => Error;
  /** Times each wait for the client's bytes (`client_body_timeout`). */
  timer?: BodyReadTimer | undefined;
}

/** What a read cancelled by `client_body_timeout` is told as. */
const TIMED_OUT = new Error("client_body_timeout passed");

/**
 * Writes every chunk of `stream` through `options.write`, framed when
 * `options.chunked`, then the last chunk. A byte stream is read into one
 * reused buffer; any other stream chunk by chunk.
 *
 * @example Counting what would be sent
 * ```ts
 * import { sendBody } from "./request_body.ts";
 *
 * let sent = 0;
 * await sendBody(new Blob(["hello"]).stream(), {
 *   chunked: true,
 *   write: (bytes) => {
 *     sent += bytes.length;
 *     return Promise.resolve();
 *   },
 *   onReadError: (error) => new Error("client gone", { cause: error }),
 * });
 * // "5\r\nhello\r\n" and "0\r\n\r\n"
 * if (sent !== 15) throw new Error(`sent ${sent}`);
 * ```
 *
 * @param stream The client's request body.
 * @param options Framing, the writer, the read-error wrapper and the
 * timer of the waits for the client.
 * @returns The body bytes read (and sent).
 */
export async function sendBody(
  stream: ReadableStream<Uint8Array>,
  options: SendBodyOptions,
): Promise<number> {
  let byob: ReadableStreamBYOBReader | null = null;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream: a body built in JS rather than by Deno.serve.
  }
  const plain = byob === null ? stream.getReader() : null;
  let buffer = new ArrayBuffer(plain !== null ? 0 : HEAD_ROOM + READ_SIZE + 2);
  const timer = options.timer;
  // One closure per body, made only when it is timed.
  const cancel = timer && (() => {
    (plain ?? byob!).cancel().catch(() => {});
  });
  let received = 0;
  // Small pieces are gathered (made at the first one): a chunked body of
  // one-byte chunks was a write per byte.
  let gather: WriteGather | null = null;
  try {
    while (true) {
      let next: ReadableStreamReadResult<Uint8Array>;
      timer?.reading(cancel!);
      try {
        next = plain !== null
          ? await plain.read()
          : await byob!.read(new Uint8Array(buffer, HEAD_ROOM, READ_SIZE));
      } catch (error) {
        throw options.onReadError(error, received);
      } finally {
        timer?.read();
      }
      // A cancelled read settles done: the body did not end.
      if (timer?.timedOut) throw options.onReadError(TIMED_OUT, received);
      if (next.done) break;
      const data = next.value;
      // A BYOB read detached `buffer`; the same memory came back in `data`.
      if (plain === null) buffer = data.buffer as ArrayBuffer;
      if (data.length === 0) continue;
      received += data.length;
      if (data.length < GATHER_PIECE) {
        gather ??= new WriteGather(
          options.chunked
            ? (room, length) => options.write(frameInPlace(room, length))
            : (room, length) =>
              options.write(new Uint8Array(room, HEAD_ROOM, length)),
          HEAD_ROOM,
          2,
          // A read waiting for the client ends (done), and the loop
          // throws the write's error.
          () => void (plain ?? byob!).cancel().catch(() => {}),
        );
        // No promise per piece unless the block is full.
        const full = gather.add(data);
        if (full !== null) await full;
        continue;
      }
      // A larger piece goes as it is, after what was gathered.
      if (gather !== null) await gather.flush();
      if (!options.chunked) {
        await options.write(data);
        continue;
      }
      // One write per piece, framing included: separate tiny writes for the
      // size line and CRLF (with TCP_NODELAY) made a 100 MiB upload take
      // 7.5 s instead of 0.4 s. A plain stream's chunk is copied for it.
      let room = buffer;
      if (plain !== null) {
        room = new ArrayBuffer(HEAD_ROOM + data.length + 2);
        new Uint8Array(room).set(data, HEAD_ROOM);
      }
      await options.write(frameInPlace(room, data.length));
    }
    if (gather !== null) await gather.flush();
  } finally {
    (plain ?? byob!).releaseLock();
  }
  if (options.chunked) await options.write(LAST_CHUNK);
  return received;
}

/**
 * Writes the size line before and CRLF after the `length` bytes at
 * `HEAD_ROOM`, returning the framed chunk as a view of the same memory.
 */
function frameInPlace(buffer: ArrayBuffer, length: number): Uint8Array {
  const all = new Uint8Array(buffer);
  const size = length.toString(16);
  const start = HEAD_ROOM - size.length - 2;
  for (let i = 0; i < size.length; i++) all[start + i] = size.charCodeAt(i);
  all[HEAD_ROOM - 2] = 13;
  all[HEAD_ROOM - 1] = 10;
  all[HEAD_ROOM + length] = 13;
  all[HEAD_ROOM + length + 1] = 10;
  return all.subarray(start, HEAD_ROOM + length + 2);
}
