/**
 * Young-generation collections paced by streamed response bytes.
 *
 * Every chunk of a streamed response body is a new buffer: `Deno.serve`
 * keeps the bytes it is given until they are on the wire
 * (`op_readable_stream_resource_write_buf` takes the buffer, not a copy), so
 * one buffer cannot be refilled the way an upload's is (request_body.ts).
 * The chunks die young, but they live outside the JS heap: V8 collects its
 * young generation only when that fills with JavaScript objects (a few
 * hundred bytes per chunk), and starts a full collection only after tens of
 * MiB of external growth, so a long download grows RSS by that much.
 *
 * With `--expose-gc` (one of the run flags), a minor collection after every
 * {@linkcode DEFAULT_GC_EVERY_BYTES} of streamed body frees the chunks
 * already sent, and collecting often and small costs less CPU than
 * collecting late (scripts/README.md has the figures). Without the flag, the
 * pacer does nothing.
 *
 * @module
 */

/** V8's `gc()`, present with `--expose-gc`. */
export type Collect = (options: { type: "minor" | "major" }) => void;

/** Bytes of streamed body between two collections. */
export const DEFAULT_GC_EVERY_BYTES = 4 * 1024 * 1024;

/** Options for {@linkcode GcPacer}. */
export interface GcPacerOptions {
  /** @default {DEFAULT_GC_EVERY_BYTES} */
  everyBytes?: number;
  /** The collector; defaults to `globalThis.gc` when exposed. */
  collect?: Collect | null;
}

/**
 * Counts streamed body bytes and asks V8 for a minor collection after each
 * `everyBytes` of them.
 *
 * @example Collecting after every 4 bytes
 * ```ts
 * import { GcPacer } from "./gc_pacer.ts";
 *
 * let collections = 0;
 * const pacer = new GcPacer({ everyBytes: 4, collect: () => collections++ });
 * pacer.add(3);
 * pacer.add(3);
 * pacer.add(10);
 * if (collections !== 2) throw new Error(`${collections} collections`);
 * ```
 */
export class GcPacer {
  #every: number;
  #left: number;
  #collect: Collect | null;

  /**
   * Creates a pacer.
   *
   * @param options The byte interval and the collector.
   */
  constructor(options: GcPacerOptions = {}) {
    this.#every = options.everyBytes ?? DEFAULT_GC_EVERY_BYTES;
    this.#left = this.#every;
    this.#collect = options.collect !== undefined
      ? options.collect
      : (globalThis as { gc?: Collect }).gc ?? null;
  }

  /** Whether collections will be made (`--expose-gc` is on, or a collector was given). */
  get active(): boolean {
    return this.#collect !== null;
  }

  /**
   * Counts `bytes` handed to the client; collects when the interval is
   * used up. One collection however many intervals a chunk spans: what it
   * frees does not depend on how many there were.
   *
   * @param bytes The size of a chunk just passed on.
   */
  add(bytes: number): void {
    if (this.#collect === null) return;
    this.#left -= bytes;
    if (this.#left > 0) return;
    this.#left = this.#every;
    this.#collect({ type: "minor" });
  }
}
