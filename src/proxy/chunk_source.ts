/**
 * Reading a request body with as little garbage as possible, for
 * `request_buffer.ts`.
 *
 * @module
 */

/** Bytes asked for per read of a body that may go to a file. */
const READ_SIZE = 64 * 1024;

/**
 * A request body read into one buffer (a BYOB reader on `Deno.serve`'s
 * byte stream): a fresh 64 KiB buffer per chunk is garbage V8 collects
 * only tens of MiB later (see `upstream/request_body.ts`), so forty
 * uploads at once held hundreds of MB. A body of a small declared length
 * is read in place into a buffer of its size, which becomes the body.
 */
export class ChunkSource {
  #byob: ReadableStreamBYOBReader | null = null;
  #plain: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #buffer: ArrayBuffer;
  #exact: boolean;
  #at = 0;

  /**
   * @param stream The body.
   * @param exactLength A declared length read in place, or `null`.
   */
  constructor(stream: ReadableStream<Uint8Array>, exactLength: number | null) {
    try {
      this.#byob = stream.getReader({ mode: "byob" });
    } catch {
      // Not a byte stream: a body built in JS rather than by Deno.serve.
      this.#plain = stream.getReader();
    }
    this.#exact = exactLength !== null && this.#byob !== null;
    // One byte past a declared length: the read that sees the end needs room.
    const size = exactLength === null ? READ_SIZE : exactLength + 1;
    this.#buffer = new ArrayBuffer(this.#byob === null ? 0 : size);
  }

  /** The body is read in place: {@linkcode whole} has it. */
  get inPlace(): boolean {
    return this.#exact;
  }

  /** Chunks are views of one buffer the next read reuses. */
  get reused(): boolean {
    return this.#byob !== null && !this.#exact;
  }

  /**
   * The next chunk, or `null` at the end.
   *
   * @returns A view valid until the next read when {@linkcode reused}.
   */
  async read(): Promise<Uint8Array | null> {
    if (this.#plain !== null) {
      const next = await this.#plain.read();
      return next.done ? null : next.value;
    }
    const from = this.#exact ? this.#at : 0;
    const next = await this.#byob!.read(
      new Uint8Array(this.#buffer, from, this.#buffer.byteLength - from),
    );
    // A BYOB read detached the buffer; the same memory came back.
    if (next.value !== undefined) {
      this.#buffer = next.value.buffer as ArrayBuffer;
    }
    if (next.done) return null;
    if (this.#exact) this.#at += next.value.length;
    return next.value;
  }

  /** What an exact-length read has put in place. */
  whole(): Uint8Array {
    if (!this.#exact) throw new Error("not read in place");
    return new Uint8Array(this.#buffer, 0, this.#at);
  }

  /** Cancels the body; a failure has nothing left to undo. */
  cancel(): void {
    (this.#byob ?? this.#plain)!.cancel().catch(() => {});
  }

  /** Releases the lock on the body. */
  release(): void {
    (this.#byob ?? this.#plain)!.releaseLock();
  }
}
