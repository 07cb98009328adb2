/**
 * Reading a request body chunk by chunk under `client_body_timeout`, for
 * `request_buffer.ts`.
 *
 * @module
 */

/** How often {@linkcode BodyDeadlines} looks for stalled bodies (ms). */
export const BODY_TICK_MS = 50;

/**
 * A request body's chunks through one default reader, with the time of
 * its last read. `Deno.serve`'s request bodies are not byte streams, so a
 * BYOB reader cannot be had for them (`getReader({ mode: "byob" })`
 * throws), and trying cost a TypeError and its stack per request: 8 % of a
 * small POST's CPU.
 */
export class ChunkSource {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  /** When the last read ended, or reading began (epoch ms). */
  lastRead: number;
  /** `client_body_timeout`: the longest wait between two reads (ms). */
  readonly timeoutMs: number;
  /** The body was cancelled because that wait passed. */
  timedOut = false;

  /**
   * @param stream The body.
   * @param timeoutMs `client_body_timeout` in milliseconds.
   */
  constructor(stream: ReadableStream<Uint8Array>, timeoutMs: number) {
    this.#reader = stream.getReader();
    this.timeoutMs = timeoutMs;
    this.lastRead = Date.now();
  }

  /**
   * The next chunk, or `null` at the end.
   *
   * @returns A chunk of its own, which the caller may keep.
   */
  async read(): Promise<Uint8Array | null> {
    const next = await this.#reader.read();
    this.lastRead = Date.now();
    return next.done ? null : next.value;
  }

  /** Cancels the body; a failure has nothing left to undo. */
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }

  /** `client_body_timeout` passed: the pending read fails. */
  expire(): void {
    this.timedOut = true;
    this.cancel();
  }
}

/**
 * The `client_body_timeout` of every body being read, kept as nginx keeps
 * its timer tree: one interval while any body is read, not a timer armed
 * and cleared per request (a third of the reading's cost, profiled). A
 * stalled body is cancelled within {@linkcode BODY_TICK_MS} of its timeout.
 */
export class BodyDeadlines {
  #reading = new Set<ChunkSource>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * Starts watching a body being read.
   *
   * @param source The body.
   */
  watch(source: ChunkSource): void {
    this.#reading.add(source);
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
  unwatch(source: ChunkSource): void {
    this.#reading.delete(source);
  }

  /** Stops the interval and forgets every body. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#reading.clear();
  }

  #tick(): void {
    const now = Date.now();
    for (const source of this.#reading) {
      if (now - source.lastRead >= source.timeoutMs) {
        this.#reading.delete(source);
        source.expire();
      }
    }
    if (this.#reading.size === 0) this.stop();
  }
}
