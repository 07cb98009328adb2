/**
 * Small pieces of a request body streamed upstream, written together.
 *
 * `Deno.serve` hands over each chunk of a chunked body as a piece of its
 * own: a body of one-byte chunks sent on as it came was a write (and a
 * chunk, or a FastCGI record, of its own) per byte. nginx reads what the
 * socket has, decodes every chunk in it into one buffer and sends that
 * (ngx_http_do_read_client_request_body), so it never sends more pieces
 * than it read. Here a small piece is copied into a block, and the block
 * is written as soon as no write is under way: a lone piece goes at once,
 * as before, and the pieces that come while a write is under way go
 * together with the next one. Nothing waits for more to come.
 *
 * @module
 */

/** A piece under this many bytes is gathered; a larger one is written as it is. */
export const GATHER_PIECE = 16 * 1024;

/** Bytes a block gathers at most. */
const BLOCK = 64 * 1024;

/**
 * Writes one gathered block: its bytes are at `headRoom` in `buffer`,
 * `length` of them, with `tailRoom` bytes free after them for framing.
 * The buffer is written again only after the promise settles.
 */
export type GatherWrite = (
  buffer: ArrayBuffer,
  length: number,
) => Promise<void>;

/**
 * Gathers small pieces into two blocks taken in turn: one being written,
 * the other gathering. Its write never rejects: a failure is kept and
 * thrown by the next {@linkcode add} or {@linkcode flush}.
 *
 * @example Three pieces, two writes: the first at once, the rest together
 * ```ts
 * import { WriteGather } from "./write_gather.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const written: string[] = [];
 * const gather = new WriteGather((buffer, length) => {
 *   written.push(new TextDecoder().decode(new Uint8Array(buffer, 0, length)));
 *   return Promise.resolve();
 * });
 * // Three pieces that came while the first was written.
 * for (const piece of ["a", "b", "c"]) {
 *   gather.add(new TextEncoder().encode(piece));
 * }
 * await gather.flush();
 * deepStrictEqual(written, ["a", "bc"]);
 * ```
 */
export class WriteGather {
  readonly #write: GatherWrite;
  readonly #headRoom: number;
  readonly #size: number;
  /** Made when first gathered into: a lone small piece needs one. */
  readonly #blocks: [ArrayBuffer | null, ArrayBuffer | null] = [null, null];
  #current = 0;
  #filled = 0;
  #writing: Promise<void> | null = null;
  #failed = false;
  #error: unknown = undefined;
  #onFailed: (() => void) | undefined;

  /**
   * @param write Writes a block.
   * @param headRoom Bytes kept free before the data (a chunk-size line).
   * @param tailRoom Bytes kept free after it (a chunk's CRLF).
   * @param onFailed Told when a write fails: a read of the client's body
   * waiting meanwhile is to be given up (cancelled), so the failure is
   * answered now, not after the client's next bytes or its timeout.
   */
  constructor(
    write: GatherWrite,
    headRoom = 0,
    tailRoom = 0,
    onFailed?: () => void,
  ) {
    this.#write = write;
    this.#onFailed = onFailed;
    this.#headRoom = headRoom;
    this.#size = headRoom + BLOCK + tailRoom;
  }

  /**
   * Copies a piece (under {@linkcode GATHER_PIECE} bytes) into the block,
   * written at once when no write is under way.
   *
   * @param piece The bytes; not kept.
   * @returns `null`, or a promise to wait on when the block was full.
   * @throws The error of an earlier write.
   */
  add(piece: Uint8Array): Promise<void> | null {
    if (this.#failed) throw this.#error;
    if (this.#filled + piece.length > BLOCK) return this.#addLater(piece);
    const block = this.#blocks[this.#current] ??= new ArrayBuffer(this.#size);
    new Uint8Array(block).set(piece, this.#headRoom + this.#filled);
    this.#filled += piece.length;
    if (this.#writing === null) this.#start();
    return null;
  }

  /**
   * Waits until every gathered byte is written.
   *
   * @throws The error of a write.
   */
  async flush(): Promise<void> {
    // Bounded: each settled write starts at most one more, of bytes
    // gathered before this call.
    while (this.#writing !== null) await this.#writing;
    if (this.#failed) throw this.#error;
  }

  /** The block is full: the write under way ends and takes it first. */
  async #addLater(piece: Uint8Array): Promise<void> {
    while (this.#writing !== null && this.#filled + piece.length > BLOCK) {
      await this.#writing;
    }
    this.add(piece);
  }

  /** Writes the current block; the other one gathers meanwhile. */
  #start(): void {
    const buffer = this.#blocks[this.#current]!;
    const length = this.#filled;
    this.#current ^= 1;
    this.#filled = 0;
    this.#writing = this.#write(buffer, length).then(
      () => {
        this.#writing = null;
        if (this.#filled > 0) this.#start();
      },
      (error) => {
        this.#writing = null;
        this.#failed = true;
        this.#error = error;
        this.#onFailed?.();
      },
    );
  }
}
