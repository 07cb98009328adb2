/**
 * A request body buffered to a file, read by position: each send (a try,
 * a retry on a fresh connection, an `error_page`'s request) keeps its own
 * place in it. Tries can overlap: a try whose upstream answered early
 * leaves its write running (`early_answer.ts`) while the next try starts,
 * and both read the one open handle the file has (it is removed from its
 * folder when opened, so it cannot be opened again). Deno has no
 * positional read (`pread`), so a seek and its read run as one step,
 * after the step before.
 *
 * @module
 */

const NOTHING = () => {};

/**
 * One open file read by position.
 *
 * @example Two readers of one file, each at its own place
 * ```ts
 * import { BodyFile } from "./body_file.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "abcdef");
 * using file = await Deno.open(path, { read: true });
 * const body = new BodyFile(file);
 * const a = new Uint8Array(2);
 * const b = new Uint8Array(2);
 * const [n, m] = await Promise.all([body.readAt(a, 0), body.readAt(b, 4)]);
 * strictEqual(new TextDecoder().decode(a.subarray(0, n!)), "ab");
 * strictEqual(new TextDecoder().decode(b.subarray(0, m!)), "ef");
 * await Deno.remove(path);
 * ```
 */
export class BodyFile {
  readonly #file: Deno.FsFile;
  /** Where the handle is, or -1 when unknown (written to, or a step failed). */
  #position = -1;
  /** The last step: the next one starts after it. */
  #tail: Promise<unknown> = Promise.resolve();

  /** @param file The open file; its owner closes it. */
  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /**
   * Reads into `buf` from `position`, after every read asked for before.
   *
   * @param buf Where the bytes go.
   * @param position The offset in the file.
   * @returns How many bytes were read, or `null` at the end of the file.
   * @throws The OS error of the seek or the read (a file already closed:
   * `BadResource`).
   */
  readAt(buf: Uint8Array, position: number): Promise<number | null> {
    const step = this.#tail.then(() => this.#step(buf, position));
    this.#tail = step.then(NOTHING, NOTHING);
    return step;
  }

  async #step(buf: Uint8Array, position: number): Promise<number | null> {
    const at = this.#position;
    this.#position = -1;
    // One try reading on from where it was costs no seek.
    if (at !== position) await this.#file.seek(position, Deno.SeekMode.Start);
    const n = await this.#file.read(buf);
    this.#position = position + (n ?? 0);
    return n;
  }
}
