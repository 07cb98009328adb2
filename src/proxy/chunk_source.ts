/**
 * Reading a request body chunk by chunk, for `request_buffer.ts`.
 *
 * @module
 */

/**
 * A request body's chunks through one default reader. `Deno.serve`'s
 * request bodies are not byte streams, so a BYOB reader cannot be had for
 * them (`getReader({ mode: "byob" })` throws), and trying cost a TypeError
 * and its stack per request: 8 % of a small POST's CPU.
 */
export class ChunkSource {
  #reader: ReadableStreamDefaultReader<Uint8Array>;

  /** @param stream The body. */
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /**
   * The next chunk, or `null` at the end.
   *
   * @returns A chunk of its own, which the caller may keep.
   */
  async read(): Promise<Uint8Array | null> {
    const next = await this.#reader.read();
    return next.done ? null : next.value;
  }

  /** Cancels the body; a failure has nothing left to undo. */
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}
