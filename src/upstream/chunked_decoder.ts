/**
 * The upstream's chunked response bodies, decoded as they arrive
 * (RFC 9112 §7.1).
 *
 * @module
 */

/** Thrown by {@linkcode ChunkedDecoder} on malformed chunked framing. */
export class ChunkedFormatError extends Error {
  /** @param message What is wrong. */
  constructor(message: string) {
    super(message);
    this.name = "ChunkedFormatError";
  }
}

/**
 * An incremental chunked-body decoder (RFC 9112 §7.1): feed it the bytes as
 * they arrive, get the payload out. Chunk extensions and trailers are
 * skipped.
 */
export class ChunkedDecoder {
  #state: "size" | "data" | "data-crlf" | "trailer" | "done" = "size";
  #line = "";
  #left = 0;

  /** Whether the last chunk and trailers have been read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /**
   * Decodes the next bytes.
   *
   * @param bytes Bytes read from the connection.
   * @returns The payload pieces found, and how many input bytes were used
   * (fewer than given only once the body is done).
   * @throws {ChunkedFormatError} On malformed framing.
   *
   * @example Usage
   * ```ts
   * import { ChunkedDecoder } from "./chunked_decoder.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const d = new ChunkedDecoder();
   * const { data } = d.push(new TextEncoder().encode("5\r\nhello\r\n0\r\n\r\n"));
   * strictEqual(new TextDecoder().decode(data[0]), "hello");
   * strictEqual(d.done, true);
   * ```
   */
  push(bytes: Uint8Array): { data: Uint8Array[]; used: number } {
    const data: Uint8Array[] = [];
    let i = 0;
    while (i < bytes.length && this.#state !== "done") {
      if (this.#state === "data") {
        const n = Math.min(this.#left, bytes.length - i);
        data.push(bytes.subarray(i, i + n));
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = "data-crlf";
        continue;
      }
      const byte = bytes[i++]!;
      if (byte !== 10) {
        this.#line += String.fromCharCode(byte);
        if (this.#line.length > 4096) {
          throw new ChunkedFormatError("chunk line too long");
        }
        continue;
      }
      const line = this.#line.endsWith("\r")
        ? this.#line.slice(0, -1)
        : this.#line;
      this.#line = "";
      if (this.#state === "data-crlf") {
        if (line !== "") {
          throw new ChunkedFormatError("missing CRLF after chunk");
        }
        this.#state = "size";
      } else if (this.#state === "size") {
        const m = line.match(/^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/);
        if (!m) throw new ChunkedFormatError(`invalid chunk size "${line}"`);
        this.#left = parseInt(m[1]!, 16);
        this.#state = this.#left === 0 ? "trailer" : "data";
      } else if (this.#state === "trailer") {
        if (line === "") this.#state = "done";
      }
    }
    return { data, used: i };
  }
}
