/**
 * The incremental parser for the frames an upstream sends (RFC 6455 §5.2):
 * unmasked, as a server's must be, each checked against the limits before
 * its payload is buffered.
 *
 * @module
 */

import {
  type Frame,
  FrameError,
  MAX_MESSAGE_BYTES,
  NO_PAYLOAD,
} from "./websocket_frame_types.ts";

/** Below this, a drained parser keeps its buffer instead of shrinking it. */
const KEEP_BUFFER_BYTES = 256 * 1024;

/**
 * An incremental parser for frames from a server (unmasked). Bytes go into
 * one buffer that grows geometrically and is read from an offset, so a big
 * frame arriving in many reads costs linear copying, not a copy of all the
 * bytes so far on every read.
 */
export class FrameParser {
  #buffer = new Uint8Array(0);
  #start = 0;
  #end = 0;
  #copied = 0;
  #maxPayload: number;
  /** The frame handed to `parse`'s callback, reused. */
  #frame: Frame = { fin: false, opcode: 0, payload: NO_PAYLOAD };

  /**
   * @param maxPayload Largest frame payload accepted.
   */
  constructor(maxPayload: number = MAX_MESSAGE_BYTES) {
    this.#maxPayload = maxPayload;
  }

  /** Bytes copied so far (input, regrowth and payloads): linear in the input. */
  get bytesCopied(): number {
    return this.#copied;
  }

  /**
   * Adds bytes and returns the complete frames they finish.
   *
   * @param bytes Bytes read from the connection.
   * @returns The frames, in order.
   * @throws {FrameError} On a masked server frame, reserved bits, a
   * fragmented or oversized control frame, or a payload over the limit.
   *
   * @example Usage
   * ```ts
   * import { FrameParser } from "./websocket_frame_parser.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const p = new FrameParser();
   * strictEqual(p.push(new Uint8Array([0x81, 2, 72])).length, 0);
   * strictEqual(new TextDecoder().decode(p.push(new Uint8Array([105]))[0]!.payload), "Hi");
   * ```
   */
  push(bytes: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    this.parse(bytes, (frame) => {
      frames.push({ ...frame });
    });
    return frames;
  }

  /**
   * Adds bytes and hands each complete frame they finish to `onFrame`, in
   * order: one frame object, reused, and read only during the call, so a
   * flood of small frames (2 bytes each on the wire) makes no object per
   * frame, which the garbage collector would reclaim only after the
   * process had grown by many times the bytes read.
   *
   * @param bytes Bytes read from the connection.
   * @param onFrame Told each frame; returning `true` stops (a close frame:
   * nothing after it is read).
   * @throws {FrameError} As {@linkcode FrameParser.push}; and what
   * `onFrame` throws.
   *
   * @example Usage
   * ```ts
   * import { FrameParser } from "./websocket_frame_parser.ts";
   * import { deepStrictEqual } from "node:assert/strict";
   *
   * const opcodes: number[] = [];
   * new FrameParser().parse(new Uint8Array([0x81, 0, 0x89, 0]), (f) => {
   *   opcodes.push(f.opcode);
   * });
   * deepStrictEqual(opcodes, [1, 9]);
   * ```
   */
  parse(bytes: Uint8Array, onFrame: (frame: Frame) => boolean | void): void {
    this.#append(bytes);
    const data = this.#buffer;
    const frame = this.#frame;
    let at = this.#start;
    const end = this.#end;
    while (end - at >= 2) {
      const b0 = data[at]!;
      const b1 = data[at + 1]!;
      if (b0 & 0x70) throw new FrameError("a frame with reserved bits set");
      if (b1 & 0x80) throw new FrameError("a masked frame");
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (end - at < 4) break;
        length = (data[at + 2]! << 8) | data[at + 3]!;
        header = 4;
      } else if (length === 127) {
        if (end - at < 10) break;
        const big = new DataView(data.buffer, data.byteOffset + at + 2, 8)
          .getBigUint64(0);
        if (big > BigInt(this.#maxPayload)) {
          throw new FrameError("too big frame", 1009);
        }
        length = Number(big);
        header = 10;
      }
      if (opcode >= 0x8 && (!fin || length > 125)) {
        throw new FrameError("an invalid control frame");
      }
      if (length > this.#maxPayload) {
        throw new FrameError("too big frame", 1009);
      }
      if (end - at < header + length) break;
      frame.fin = fin;
      frame.opcode = opcode;
      // Empty frames share one payload; others get a copy the caller may
      // keep (the buffer is reused).
      frame.payload = length === 0
        ? NO_PAYLOAD
        : data.slice(at + header, at + header + length);
      this.#copied += length;
      at += header + length;
      this.#start = at;
      if (onFrame(frame) === true) break;
    }
    this.#start = at;
    if (at === end) this.#drained();
  }

  /** Copies new bytes in, first moving or regrowing the buffer if full. */
  #append(bytes: Uint8Array): void {
    const live = this.#end - this.#start;
    if (this.#buffer.length - this.#end < bytes.length) {
      const needed = live + bytes.length;
      // Regrow to at least double, so a frame of n bytes is moved O(log n)
      // times in all, O(n) bytes; moving down in place also costs at most
      // one copy of the live bytes, which are less than one frame.
      const target = needed <= this.#buffer.length
        ? this.#buffer
        : new Uint8Array(Math.max(needed, this.#buffer.length * 2, 4096));
      target.set(this.#buffer.subarray(this.#start, this.#end));
      this.#copied += live;
      this.#buffer = target;
      this.#start = 0;
      this.#end = live;
    }
    this.#buffer.set(bytes, this.#end);
    this.#end += bytes.length;
    this.#copied += bytes.length;
  }

  /** Everything is parsed: rewind, and let a big frame's buffer go. */
  #drained(): void {
    this.#start = 0;
    this.#end = 0;
    if (this.#buffer.length > KEEP_BUFFER_BYTES) {
      this.#buffer = new Uint8Array(0);
    }
  }
}
