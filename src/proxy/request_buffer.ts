/**
 * nginx's `proxy_request_buffering on`: the whole request body is read
 * before any upstream is contacted (`ngx_http_read_client_request_body`),
 * in memory up to `client_body_buffer_size`, past it into a temporary file,
 * with `client_body_timeout` between two reads and `client_max_body_size`
 * for a body without a declared length. The body is then sent with a
 * `Content-Length` and can be sent again to another server or on a new
 * connection. A slow client holds only its own connection, never an
 * upstream one.
 *
 * @module
 */

import { BodyFile, type UpstreamCall } from "../upstream/mod.ts";
import type { TempFile, TempFiles } from "./temp_files.ts";
import { BodyDeadlines, ChunkSource, type TimedRead } from "./chunk_source.ts";

export { BodyDeadlines };

/** A body read whole: bytes, or a temporary file. */
export type BufferedBody = NonNullable<UpstreamCall["body"]>;

/** How reading the body ended. */
export type BodyReadResult =
  | {
    kind: "ready";
    /** The body, or `null` when it was empty. */
    body: BufferedBody | null;
    /** The temporary file holding it, to close once forwarding is done. */
    temp: TempFile | null;
  }
  | {
    kind: "too-large";
    message: string;
    /** The body bytes read before the piece past the limit. */
    received?: number;
  }
  /** `client_body_timeout` passed between two reads: nginx's 408. */
  | {
    kind: "timeout";
    /** The body bytes read before, when counted (not by one call's read). */
    received?: number;
  }
  /** The client went away, or its chunked framing was invalid. */
  | {
    kind: "read-failed";
    error: unknown;
    /** The body bytes read before, when counted (not by one call's read). */
    received?: number;
  }
  /** The temporary file could not be made or written (nginx's 500). */
  | {
    kind: "temp-failed";
    error: unknown;
    path: string;
    /** The file was open: writing it failed, not opening it. */
    opened: boolean;
  };

/** Options for {@linkcode readRequestBody}. */
export interface BodyReadOptions {
  /** The declared `Content-Length`, or `null` (chunked). */
  length: number | null;
  /** `client_max_body_size` for a body without a declared length; 0 = none. */
  limit: number;
  /** `client_body_buffer_size`. */
  bufferSize: number;
  /** `client_body_timeout` in milliseconds. */
  timeoutMs: number;
  /**
   * Where a body over the buffer goes; without it the body stays in
   * memory (a body without a length read ahead up to `limit`).
   */
  temp?: TempFiles | undefined;
  /** Told the file's path when a body goes to one (nginx's `[warn]`). */
  onTempFile?: (path: string) => void;
  /**
   * The timers of every body being read, made once by the caller; without
   * them the read keeps its own.
   */
  deadlines?: BodyDeadlines;
}

/**
 * The most of a body nginx holds beside its body buffer: the bytes that
 * came with the head in its first header buffer (`client_header_buffer_size`,
 * 1k), which ngx_http_read_client_request_body keeps and counts before it
 * sizes the buffer for the rest. `Deno.serve` does not tell how much came
 * with the head, so every body is given the most: one that nginx reads
 * into a file only because its bytes came after the head stays in memory
 * here, without the `[warn]` (README, body-preread).
 */
export const PREREAD = 1024;

/**
 * Whether a body of a declared length stays in memory: nginx sizes its
 * buffer to the rest of a declared length, past the bytes read with the
 * head ({@linkcode PREREAD}), when that rest is under 1.25 times
 * `client_body_buffer_size`, and keeps such a body in memory
 * (ngx_http_read_client_request_body).
 *
 * @param length The declared `Content-Length`, or `null`.
 * @param bufferSize `client_body_buffer_size`.
 * @returns Whether it is read into memory whole.
 *
 * @example Usage
 * ```ts
 * import { fitsInMemory } from "./request_buffer.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(fitsInMemory(10240 + 1023, 8192), true);
 * strictEqual(fitsInMemory(10240 + 1024, 8192), false);
 * strictEqual(fitsInMemory(null, 8192), false);
 * ```
 */
export function fitsInMemory(
  length: number | null,
  bufferSize: number,
): boolean {
  return length !== null &&
    length < bufferSize + (bufferSize >> 2) + PREREAD;
}

/** One call's read of a whole body, under `client_body_timeout`. */
class WholeRead implements TimedRead {
  readonly lastRead = Date.now();
  readonly timeoutMs: number;
  deadlineSlot = -1;
  #done: ((result: BodyReadResult) => void) | null;

  constructor(timeoutMs: number, done: (result: BodyReadResult) => void) {
    this.timeoutMs = timeoutMs;
    this.#done = done;
  }

  /** The first outcome wins: the read's, or the deadline's. */
  settle(result: BodyReadResult): void {
    const done = this.#done;
    this.#done = null;
    done?.(result);
  }

  expire(): void {
    this.settle(TIMED_OUT);
  }
}

const TIMED_OUT: BodyReadResult = { kind: "timeout" };

/**
 * Reads a body small enough for memory ({@linkcode fitsInMemory}) with one
 * call: `Deno.serve` hands over a body it already holds whole without a
 * stream (`req.bytes()` takes it as it is), where a reader made a stream
 * (two `WeakMap` entries in Deno), its queue and a promise per chunk.
 * `client_body_timeout` still holds: past it the read is given
 * up (its late failure is ignored) and the answer is the 408, as with
 * {@linkcode readRequestBody}. A body cut short does not tell how much of
 * it came: a line that reads `$request_length` has its bodies read by
 * {@linkcode readRequestBody} instead.
 *
 * @param req The client's request.
 * @param options `client_body_timeout`, and the timers of every body being read.
 * @returns The body, or why it could not be read.
 */
export function readWholeBody(
  req: Request,
  options: { timeoutMs: number; deadlines?: BodyDeadlines | undefined },
): Promise<BodyReadResult> {
  const deadlines = options.deadlines ?? new BodyDeadlines();
  return new Promise((resolve) => {
    const read = new WholeRead(options.timeoutMs, (result) => {
      if (options.deadlines === undefined) deadlines.stop();
      else deadlines.unwatch(read);
      resolve(result);
    });
    deadlines.watch(read);
    req.bytes().then(
      (bytes) =>
        read.settle({
          kind: "ready",
          body: bytes.length === 0 ? null : {
            kind: "bytes",
            // Not a view that would keep a far larger buffer alive.
            bytes: bytes.buffer.byteLength <= 2 * bytes.length
              ? bytes
              : bytes.slice(),
          },
          temp: null,
        }),
      (error) => read.settle({ kind: "read-failed", error }),
    );
  });
}

/**
 * Reads a request body whole.
 *
 * @param stream The client's body.
 * @param options Sizes, timer and the temporary-file folder.
 * @returns The body, or why it could not be read.
 */
export async function readRequestBody(
  stream: ReadableStream<Uint8Array>,
  options: BodyReadOptions,
): Promise<BodyReadResult> {
  const inMemory = fitsInMemory(options.length, options.bufferSize);
  const reader = new ChunkSource(stream, {
    timeoutMs: options.timeoutMs,
    small: inMemory,
  });
  const chunks: Uint8Array[] = [];
  let held = 0;
  let total = 0;
  let temp: TempFile | null = null;
  let handed = false;
  // nginx's client_body_timeout is between two reads: the deadlines look
  // at the time of the last one.
  const deadlines = options.deadlines ?? new BodyDeadlines();
  deadlines.watch(reader);
  try {
    while (true) {
      let value: Uint8Array | null;
      try {
        value = await reader.read();
      } catch (error) {
        if (reader.timedOut) return { kind: "timeout", received: total };
        return { kind: "read-failed", error, received: total };
      }
      if (reader.timedOut) return { kind: "timeout", received: total };
      if (value === null) break;
      if (
        options.length === null && options.limit > 0 &&
        total + value.length > options.limit
      ) {
        reader.cancel();
        return {
          kind: "too-large",
          message:
            `client intended to send too large chunked body: ${total}+${value.length} bytes`,
          received: total,
        };
      }
      total += value.length;
      // Pieces are gathered into the reader's block and kept or written a
      // block at a time: a body costs per byte, not per piece (a chunked
      // body of one-byte chunks is a piece per byte). A plain stream's
      // piece (its own memory) is gathered only when small, and never for
      // a body read whole into memory (one piece, as Deno.serve held it).
      const gathered = reader.reused ||
        (!inMemory && value.length < SMALL_PIECE);
      if (gathered) reader.gather(value);
      if (temp === null) {
        if (!gathered) {
          // After what the block gathered before it.
          if (reader.gathered > 0) chunks.push(reader.take().slice());
          chunks.push(value);
        } else if (reader.full) chunks.push(reader.take().slice());
        held += value.length;
        // A chunked body fills nginx's buffer after what came with the
        // head (PREREAD) before it goes to a file.
        if (
          inMemory || options.temp === undefined ||
          held <= options.bufferSize + PREREAD
        ) {
          // A declared length read whole needs no further read to see the
          // end (Deno.serve stops the body at its length): one read, its
          // promise and the stream's pull fewer per request.
          if (total === options.length) break;
          continue;
        }
        try {
          temp = await options.temp.create();
        } catch (error) {
          reader.cancel();
          return tempFailed(error, options.temp.dir, false);
        }
        options.onTempFile?.(temp.path);
        // What was held, in one write; what the block still gathers goes
        // with the block.
        const failed = chunks.length === 0
          ? null
          : await writeTo(temp, join(chunks, held - reader.gathered));
        chunks.length = 0;
        held = 0;
        if (failed) {
          reader.cancel();
          return tempFailed(failed, temp.path, true);
        }
        continue;
      }
      let failed: unknown = null;
      if (!gathered) {
        if (reader.gathered > 0) failed = await writeTo(temp, reader.take());
        failed ??= await writeTo(temp, value);
      } else if (reader.full) {
        failed = await writeTo(temp, reader.take());
      }
      if (failed) {
        reader.cancel();
        return tempFailed(failed, temp.path, true);
      }
    }
    if (temp !== null && reader.gathered > 0) {
      const failed = await writeTo(temp, reader.take());
      if (failed) return tempFailed(failed, temp.path, true);
    }
    if (temp !== null) {
      // Read to the start again when it is sent.
      handed = true;
      return {
        kind: "ready",
        body: { kind: "file", file: new BodyFile(temp.file), length: total },
        temp,
      };
    }
  } finally {
    if (options.deadlines === undefined) deadlines.stop();
    else deadlines.unwatch(reader);
    // The lock is kept: nothing reads the body after this, and releasing
    // it rejects the reader's `closed` with a new TypeError and its stack
    // (7 % of a small POST's CPU).
    // A file not handed over (the read failed) is closed here, always.
    if (temp !== null && !handed) temp.close();
  }
  if (total === 0) return { kind: "ready", body: null, temp: null };
  if (reader.gathered > 0) chunks.push(reader.take());
  return {
    kind: "ready",
    body: {
      kind: "bytes",
      bytes: join(chunks, total),
    },
    temp: null,
  };
}

/**
 * A plain stream's piece under this size is gathered (copied into a block)
 * before it is kept or written; a larger one is kept as it came, which
 * bounds the pieces a body is kept as by its bytes.
 */
const SMALL_PIECE = 4096;

/** Writes a whole chunk to the file; the error, or `null`. */
async function writeTo(
  temp: TempFile,
  chunk: Uint8Array,
): Promise<unknown> {
  try {
    let at = 0;
    while (at < chunk.length) at += await temp.file.write(chunk.subarray(at));
    return null;
  } catch (error) {
    return error ?? new Error("write failed");
  }
}

function tempFailed(
  error: unknown,
  path: string,
  opened: boolean,
): BodyReadResult {
  const named = (error as { path?: unknown }).path;
  return {
    kind: "temp-failed",
    error,
    path: typeof named === "string" ? named : path,
    opened,
  };
}

function join(chunks: Uint8Array[], total: number): Uint8Array {
  const first = chunks[0]!;
  // One chunk is the body, unless it is a view of a far larger buffer
  // (a 64 KiB read of a byte stream), which it would keep alive.
  if (chunks.length === 1 && first.buffer.byteLength <= 2 * total) {
    return first;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}
