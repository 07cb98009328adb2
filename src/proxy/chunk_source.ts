/**
 * Reading a request body chunk by chunk under `client_body_timeout`, for
 * `request_buffer.ts`.
 *
 * @module
 */

import type { BodyReadTimer } from "../upstream/mod.ts";

/** How often {@linkcode BodyDeadlines} looks for stalled bodies (ms). */
export const BODY_TICK_MS = 50;

/** Bytes asked for per read of a body that may go to a file. */
const READ_SIZE = 64 * 1024;
/** A read's room after fewer than `READ_SIZE` (64 KiB) gathered bytes. */
const BLOCK_SIZE = 2 * READ_SIZE;

/**
 * A request body's chunks, with the time of its last read.
 *
 * A body that may be large is read into one reused buffer (a BYOB reader
 * on `Deno.serve`'s byte stream): a fresh 64 KiB buffer per chunk is
 * garbage V8 collects only tens of MiB later (see
 * `upstream/request_body.ts`), so forty uploads at once held hundreds of
 * MB. A small body goes through a default reader: `Deno.serve` hands over
 * one it already holds whole as a stream that is not a byte stream, and
 * asking it for a BYOB reader throws a TypeError whose stack was 8 % of a
 * small POST's CPU.
 *
 * Pieces are gathered ({@linkcode gather}) into one block before they are
 * kept or written, so a body costs per byte, not per piece: `Deno.serve`
 * hands over each chunk of a chunked body as a piece of its own, and a
 * body of 120,000 one-byte chunks, each copied and written to its
 * temporary file alone, cost 4-6 s of CPU (nginx decodes every chunk a
 * socket read brings into one buffer, ngx_http_request_body_chunked_filter,
 * and writes that buffer when it is full). A BYOB read lands right after
 * the bytes gathered so far, so gathering it copies nothing.
 */
export class ChunkSource implements TimedRead {
  #byob: ReadableStreamBYOBReader | null = null;
  #plain: ReadableStreamDefaultReader<Uint8Array> | null = null;
  /** The block pieces are read into (BYOB) or gathered in. */
  #buffer: ArrayBuffer;
  /** Bytes gathered at the start of the block. */
  #gathered = 0;
  /** When the last read ended, or reading began (epoch ms). */
  lastRead: number;
  /** `client_body_timeout`: the longest wait between two reads (ms). */
  readonly timeoutMs: number;
  /** The body was cancelled because that wait passed. */
  timedOut = false;
  /** Its place in {@linkcode BodyDeadlines}' list; -1 when not watched. */
  deadlineSlot = -1;

  /**
   * @param stream The body.
   * @param options `client_body_timeout` in milliseconds, and whether the
   * body is small enough to read chunk by chunk.
   */
  constructor(
    stream: ReadableStream<Uint8Array>,
    options: { timeoutMs: number; small: boolean },
  ) {
    if (!options.small) {
      try {
        this.#byob = stream.getReader({ mode: "byob" });
      } catch {
        // Not a byte stream: a body held whole, or built in JS.
      }
    }
    if (this.#byob === null) this.#plain = stream.getReader();
    // Room for a whole read after up to READ_SIZE - 1 gathered bytes; a
    // plain stream's block is made when a piece is first gathered.
    this.#buffer = new ArrayBuffer(this.#byob === null ? 0 : BLOCK_SIZE);
    this.timeoutMs = options.timeoutMs;
    this.lastRead = Date.now();
  }

  /** Chunks are views of one buffer the next read reuses. */
  get reused(): boolean {
    return this.#byob !== null;
  }

  /**
   * The next chunk, or `null` at the end. A BYOB read asks for
   * `READ_SIZE` (64 KiB) bytes, as many as before gathering existed: a
   * piece past `client_max_body_size` is told with its size.
   *
   * @returns A view valid until the next read when {@linkcode reused}.
   */
  async read(): Promise<Uint8Array | null> {
    let next: ReadableStreamReadResult<Uint8Array>;
    if (this.#plain !== null) {
      next = await this.#plain.read();
    } else {
      next = await this.#byob!.read(
        new Uint8Array(this.#buffer, this.#gathered, READ_SIZE),
      );
      // A BYOB read detached the buffer; the same memory came back.
      if (next.value !== undefined) {
        this.#buffer = next.value.buffer as ArrayBuffer;
      }
    }
    this.lastRead = Date.now();
    return next.done ? null : next.value;
  }

  /**
   * Adds the piece {@linkcode read} returned last to the gathered bytes:
   * a BYOB read put it there already, a plain stream's piece is copied.
   * A plain piece over `READ_SIZE` (64 KiB) does not fit: the caller
   * keeps it whole (after what was {@linkcode take}n).
   *
   * @param piece The piece just read.
   */
  gather(piece: Uint8Array): void {
    if (this.#plain !== null) {
      if (this.#buffer.byteLength === 0) {
        this.#buffer = new ArrayBuffer(BLOCK_SIZE);
      }
      new Uint8Array(this.#buffer).set(piece, this.#gathered);
    }
    this.#gathered += piece.length;
  }

  /** Bytes gathered and not yet taken. */
  get gathered(): number {
    return this.#gathered;
  }

  /**
   * The block has no room left for a whole read: what it holds is to be
   * {@linkcode take}n before the next read.
   */
  get full(): boolean {
    return this.#gathered >= READ_SIZE;
  }

  /**
   * The gathered bytes, emptied from the block.
   *
   * @returns A view of the block, valid until the next read.
   */
  take(): Uint8Array {
    const bytes = new Uint8Array(this.#buffer, 0, this.#gathered);
    this.#gathered = 0;
    return bytes;
  }

  /** Cancels the body; a failure has nothing left to undo. */
  cancel(): void {
    (this.#byob ?? this.#plain)!.cancel().catch(() => {});
  }

  /** `client_body_timeout` passed: the pending read fails. */
  expire(): void {
    this.timedOut = true;
    this.cancel();
  }
}

/**
 * The `client_body_timeout` of a body streamed upstream as it is read
 * (`proxy_request_buffering off`): watched by the same
 * {@linkcode BodyDeadlines} as a body read whole, but only while a read
 * waits for the client; the upstream's writes between two reads are
 * `proxy_send_timeout`'s, as nginx deletes the client's read timer while
 * the upstream is busy (ngx_http_do_read_client_request_body). Its
 * reader is the transport's, which hands over how to cancel it.
 */
export class StreamedRead implements TimedRead, BodyReadTimer {
  /** When the read under way began (epoch ms). */
  lastRead = 0;
  readonly timeoutMs: number;
  timedOut = false;
  deadlineSlot = -1;
  readonly #deadlines: BodyDeadlines;
  /** The deadlines are this body's own: stopped when a read settles. */
  readonly #own: boolean;
  #cancel: (() => void) | null = null;

  /**
   * @param timeoutMs `client_body_timeout` in milliseconds.
   * @param deadlines The timers of every body being read; without them
   * the body keeps its own.
   */
  constructor(timeoutMs: number, deadlines: BodyDeadlines | undefined) {
    this.timeoutMs = timeoutMs;
    this.#own = deadlines === undefined;
    this.#deadlines = deadlines ?? new BodyDeadlines();
  }

  reading(cancel: () => void): void {
    this.#cancel = cancel;
    this.lastRead = Date.now();
    this.#deadlines.watch(this);
  }

  read(): void {
    if (this.#own) this.#deadlines.stop();
    else this.#deadlines.unwatch(this);
  }

  expire(): void {
    this.timedOut = true;
    this.#cancel?.();
  }
}

/** A body being read, as {@linkcode BodyDeadlines} watches it. */
export interface TimedRead {
  /** When the last read ended, or reading began (epoch ms). */
  readonly lastRead: number;
  /** `client_body_timeout`: the longest wait between two reads (ms). */
  readonly timeoutMs: number;
  /** The wait passed: the read fails. */
  expire(): void;
  /**
   * Its place in {@linkcode BodyDeadlines}' list, kept there so a removal
   * finds it without a scan; -1 when not watched. Set only by the list.
   */
  deadlineSlot: number;
}

/**
 * The `client_body_timeout` of every body being read, kept as nginx keeps
 * its timer tree: one interval while any body is read, not a timer armed
 * and cleared per request (a third of the reading's cost, profiled). A
 * stalled body is cancelled within {@linkcode BODY_TICK_MS} of its timeout.
 */
export class BodyDeadlines {
  /**
   * The bodies being read, in no order (a removal moves the last into its
   * place and tells it its new slot): a list, not a `Set`, whose entry per
   * request (its hashing of a new object, then the delete) showed in
   * profiles of a small POST; each body knows its slot, so a removal costs
   * the same with one body read or thousands.
   */
  #reading: TimedRead[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * Starts watching a body being read.
   *
   * @param source The body.
   */
  watch(source: TimedRead): void {
    if (source.deadlineSlot >= 0) return;
    source.deadlineSlot = this.#reading.length;
    this.#reading.push(source);
    if (this.#timer === undefined) {
      // Not unref'd: a body being read is a request the gateway serves.
      this.#timer = setInterval(() => this.#tick(), BODY_TICK_MS);
    }
  }

  /**
   * Stops watching a body (read whole, or given up); the interval ends at
   * its next tick when no body is left.
   *
   * @param source The body.
   */
  unwatch(source: TimedRead): void {
    const at = source.deadlineSlot;
    if (at < 0 || this.#reading[at] !== source) return;
    this.#removeAt(at);
  }

  /** Stops the interval and forgets every body. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const source of this.#reading) source.deadlineSlot = -1;
    this.#reading.length = 0;
  }

  /** How many bodies are watched. */
  get size(): number {
    return this.#reading.length;
  }

  /** Takes out the body at `at`; the last takes its slot. */
  #removeAt(at: number): void {
    const reading = this.#reading;
    reading[at]!.deadlineSlot = -1;
    const last = reading.pop()!;
    if (at < reading.length) {
      reading[at] = last;
      last.deadlineSlot = at;
    }
  }

  #tick(): void {
    const now = Date.now();
    const reading = this.#reading;
    let expired: TimedRead[] | null = null;
    // Downwards: the entry moved into a removed one's place is checked.
    for (let i = reading.length - 1; i >= 0; i--) {
      const source = reading[i]!;
      if (now - source.lastRead >= source.timeoutMs) {
        this.#removeAt(i);
        (expired ??= []).push(source);
      }
    }
    // Told after the list is settled: an expiry may unwatch its body.
    if (expired !== null) { for (const source of expired) source.expire(); }
    if (this.#reading.length === 0) this.stop();
  }
}
