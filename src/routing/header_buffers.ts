/**
 * nginx's request-head size limits (`large_client_header_buffers`), replayed
 * over what `Deno.serve` parsed: nginx reads a request into a
 * `client_header_buffer_size` buffer (1k), and a line that does not fit is
 * moved to one of at most `number` buffers of `size` bytes
 * (`ngx_http_alloc_large_header_buffer`). A request line that outgrows one
 * such buffer is a 414; a header line that does, or one that needs a buffer
 * past the last, is a 400 "Request Header Or Cookie Too Large".
 *
 * @module
 */

/** nginx's `large_client_header_buffers`: how many, and how large. */
export interface HeaderBuffers {
  /** Buffers at most, per request. */
  number: number;
  /** Bytes per buffer: the longest request line or header line. */
  size: number;
}

/** nginx's default, `large_client_header_buffers 4 8k`. */
export const DEFAULT_HEADER_BUFFERS: HeaderBuffers = Object.freeze({
  number: 4,
  size: 8192,
});

/** nginx's `client_header_buffer_size` default: the first buffer. */
const FIRST_BUFFER = 1024;

/**
 * nginx logs at most `NGX_MAX_ERROR_STR - 300` bytes of a header line that
 * is too long (`ngx_http_process_request_headers`).
 */
const LOGGED_LINE_BYTES = 2048 - 300;

/** Where the replay of nginx's buffers stands. */
export class HeaderBufferReplay {
  #limits: HeaderBuffers;
  #capacity = FIRST_BUFFER;
  #used = 0;
  #busy = 0;

  /** @param limits The buffers' number and size. */
  constructor(limits: HeaderBuffers) {
    this.#limits = limits;
  }

  /**
   * Places one line (with its CRLF) as nginx would.
   *
   * @param length The line's length in bytes, CRLF included.
   * @returns `-1` when it fits; otherwise how many bytes of the line nginx
   * held when it gave up (what its log line shows of it).
   */
  place(length: number): number {
    if (this.#used + length <= this.#capacity) {
      this.#used += length;
      return -1;
    }
    // The line's start moves to a new buffer, which it must fit whole.
    if (this.#busy >= this.#limits.number) {
      return this.#capacity - this.#used;
    }
    if (length > this.#limits.size) return this.#limits.size;
    this.#busy++;
    this.#capacity = this.#limits.size;
    this.#used = length;
    return -1;
  }
}

/**
 * Whether a request line (without CRLF) is too long for nginx: 414
 * `client sent too long URI`.
 *
 * @param line The request line as sent.
 * @param limits The buffers' number and size.
 * @returns The first `size` bytes nginx logs as the request, or `null`
 * when the line fits.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_HEADER_BUFFERS, tooLongRequestLine } from "./header_buffers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(tooLongRequestLine("GET / HTTP/1.1", DEFAULT_HEADER_BUFFERS), null);
 * const long = `GET /${"a".repeat(9000)} HTTP/1.1`;
 * strictEqual(tooLongRequestLine(long, DEFAULT_HEADER_BUFFERS)?.length, 8192);
 * ```
 */
export function tooLongRequestLine(
  line: string,
  limits: HeaderBuffers,
): string | null {
  // Fast path: a line of this many UTF-16 units is at most 3 bytes each.
  if ((line.length + 2) * 3 <= limits.size) return null;
  const bytes = new TextEncoder().encode(line);
  if (bytes.length + 2 <= limits.size) return null;
  return new TextDecoder().decode(bytes.subarray(0, limits.size));
}

/**
 * nginx's line for a header line that does not fit: the first bytes it
 * held, cut as nginx cuts them.
 *
 * @param line The header line, `name: value`.
 * @param held How many bytes of it nginx held (from {@linkcode HeaderBufferReplay.place}).
 * @returns e.g. `client sent too long header line: "x-big: aaa..."`.
 *
 * @example Usage
 * ```ts
 * import { tooLongHeaderMessage } from "./header_buffers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(
 *   tooLongHeaderMessage("x-a: 12345", 6),
 *   'client sent too long header line: "x-a: 1..."',
 * );
 * ```
 */
export function tooLongHeaderMessage(line: string, held: number): string {
  const shown = line.slice(0, Math.min(held, LOGGED_LINE_BYTES));
  return `client sent too long header line: "${shown}..."`;
}
