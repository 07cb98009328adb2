/**
 * The reply's FastCGI records decoded as they arrive, as
 * `ngx_http_fastcgi_process_record` reads them: nothing of a record is kept
 * but its state (a record holds at most 65535 bytes and 255 of padding by
 * its header's width), so no peer can grow it; a header nginx refuses ends
 * the decoding with nginx's words.
 *
 * @module
 */

import { FCGI_END_REQUEST, FCGI_STDERR, FCGI_STDOUT } from "./records.ts";

/** One piece of the reply, as the decoder finds it. */
export type RecordEvent =
  | { kind: "stdout"; bytes: Uint8Array }
  | { kind: "stdout-end" }
  | { kind: "stderr"; bytes: Uint8Array }
  | { kind: "end" }
  | { kind: "error"; message: string };

const enum State {
  Header,
  Data,
  Padding,
}

/**
 * The reply's records, decoded as they arrive: each chunk yields the
 * pieces of `STDOUT` and `STDERR` it holds (views into the chunk, nothing
 * copied or kept), the end of `STDOUT`, the `END_REQUEST`, or nginx's
 * message for a record it refuses. After an error or the end nothing more
 * is decoded.
 */
export class RecordDecoder {
  #state = State.Header;
  #header = new Uint8Array(8);
  #have = 0;
  #type = 0;
  #length = 0;
  #padding = 0;
  #done = false;

  /** An error or `END_REQUEST` was decoded. */
  get done(): boolean {
    return this.#done;
  }

  /**
   * Decodes one chunk.
   *
   * @param chunk Bytes as read from the connection.
   * @param out Where the pieces go, in order.
   *
   * @example Usage
   * ```ts
   * import { RecordDecoder, type RecordEvent } from "./record_decoder.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const events: RecordEvent[] = [];
   * new RecordDecoder().push(new Uint8Array([1, 6, 0, 1, 0, 2, 6, 0, 104, 105, 0, 0, 0, 0, 0, 0]), events);
   * strictEqual(events[0]?.kind, "stdout");
   * ```
   */
  push(chunk: Uint8Array, out: RecordEvent[]): void {
    let at = 0;
    while (at < chunk.length && !this.#done) {
      if (this.#state === State.Header) {
        const n = Math.min(8 - this.#have, chunk.length - at);
        this.#header.set(chunk.subarray(at, at + n), this.#have);
        this.#have += n;
        at += n;
        if (this.#have < 8) return;
        this.#have = 0;
        const error = this.#begin();
        if (error !== null) {
          this.#done = true;
          out.push({ kind: "error", message: error });
          return;
        }
        if (this.#length === 0) this.#emptyRecord(out);
        continue;
      }
      if (this.#state === State.Data) {
        const n = Math.min(this.#length, chunk.length - at);
        const bytes = chunk.subarray(at, at + n);
        at += n;
        this.#length -= n;
        if (this.#type === FCGI_STDOUT) out.push({ kind: "stdout", bytes });
        else if (this.#type === FCGI_STDERR) {
          out.push({ kind: "stderr", bytes });
        }
        if (this.#length === 0) this.#dataDone(out);
        continue;
      }
      const n = Math.min(this.#padding, chunk.length - at);
      at += n;
      this.#padding -= n;
      if (this.#padding === 0) this.#state = State.Header;
    }
  }

  /** Reads a record's header: nginx's checks, in its order. */
  #begin(): string | null {
    const h = this.#header;
    if (h[0] !== 1) {
      return `upstream sent unsupported FastCGI protocol version: ${h[0]}`;
    }
    const type = h[1]!;
    if (
      type !== FCGI_STDOUT && type !== FCGI_STDERR && type !== FCGI_END_REQUEST
    ) {
      return `upstream sent invalid FastCGI record type: ${type}`;
    }
    if (h[2] !== 0) {
      return `upstream sent unexpected FastCGI request id high byte: ${h[2]}`;
    }
    if (h[3] !== 1) {
      return `upstream sent unexpected FastCGI request id low byte: ${h[3]}`;
    }
    this.#type = type;
    this.#length = (h[4]! << 8) | h[5]!;
    this.#padding = h[6]!;
    this.#state = State.Data;
    return null;
  }

  /** A record without content: the end of `STDOUT`, or of the request. */
  #emptyRecord(out: RecordEvent[]): void {
    if (this.#type === FCGI_STDOUT) out.push({ kind: "stdout-end" });
    this.#dataDone(out);
  }

  #dataDone(out: RecordEvent[]): void {
    if (this.#type === FCGI_END_REQUEST) {
      // The application's status and protocol status are not read, as in
      // nginx: the request ends here, padding and all.
      this.#done = true;
      out.push({ kind: "end" });
      return;
    }
    this.#state = this.#padding > 0 ? State.Padding : State.Header;
  }
}
