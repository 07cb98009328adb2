/**
 * WebSocket framing (RFC 6455 §5) for the upstream side of a tunnel, where
 * the gateway is the client: frames it sends are masked, frames it receives
 * are not. Pure: encoding and an incremental parser.
 *
 * @module
 */

/** Frame opcodes (RFC 6455 §5.2). */
export const OPCODE = {
  continuation: 0x0,
  text: 0x1,
  binary: 0x2,
  close: 0x8,
  ping: 0x9,
  pong: 0xa,
} as const;

/** A frame as read off the wire. */
export interface Frame {
  /** Final fragment. */
  fin: boolean;
  /** The opcode. */
  opcode: number;
  /** The unmasked payload. */
  payload: Uint8Array;
}

/** Thrown on frames RFC 6455 forbids. */
export class FrameError extends Error {
  /** The close code to answer with (1002 protocol error, 1009 too big). */
  readonly code: number;

  /**
   * @param message What is wrong.
   * @param code The close code.
   */
  constructor(message: string, code = 1002) {
    super(message);
    this.name = "FrameError";
    this.code = code;
  }
}

/**
 * Encodes one frame.
 *
 * @param opcode The opcode.
 * @param payload The payload.
 * @param maskKey A 4-byte mask (client frames must be masked), or `null`.
 * @returns The frame's bytes.
 *
 * @example Usage
 * ```ts
 * import { encodeFrame, OPCODE } from "./websocket_frames.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual([...encodeFrame(OPCODE.text, new TextEncoder().encode("Hi"), null)], [0x81, 2, 72, 105]);
 * ```
 */
export function encodeFrame(
  opcode: number,
  payload: Uint8Array,
  maskKey: Uint8Array | null,
): Uint8Array {
  const n = payload.length;
  const lengthBytes = n < 126 ? 0 : n < 65536 ? 2 : 8;
  const maskBytes = maskKey === null ? 0 : 4;
  const out = new Uint8Array(2 + lengthBytes + maskBytes + n);
  out[0] = 0x80 | opcode;
  const maskBit = maskKey === null ? 0 : 0x80;
  if (lengthBytes === 0) out[1] = maskBit | n;
  else if (lengthBytes === 2) {
    out[1] = maskBit | 126;
    out[2] = n >> 8;
    out[3] = n & 0xff;
  } else {
    out[1] = maskBit | 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(n));
  }
  const at = 2 + lengthBytes;
  if (maskKey === null) {
    out.set(payload, at);
  } else {
    out.set(maskKey, at);
    for (let i = 0; i < n; i++) out[at + 4 + i] = payload[i]! ^ maskKey[i & 3]!;
  }
  return out;
}

/**
 * The payload of a close frame (RFC 6455 §5.5.1).
 *
 * @param code The close code, or `undefined` for none.
 * @param reason The reason.
 * @returns The payload.
 */
export function closePayload(
  code: number | undefined,
  reason = "",
): Uint8Array {
  if (code === undefined) return new Uint8Array(0);
  const text = new TextEncoder().encode(reason).subarray(0, 123);
  const out = new Uint8Array(2 + text.length);
  out[0] = code >> 8;
  out[1] = code & 0xff;
  out.set(text, 2);
  return out;
}

/**
 * Reads a close frame's payload.
 *
 * @param payload The payload.
 * @returns The code (`undefined` when absent) and reason.
 */
export function parseClosePayload(
  payload: Uint8Array,
): { code: number | undefined; reason: string } {
  if (payload.length < 2) return { code: undefined, reason: "" };
  return {
    code: (payload[0]! << 8) | payload[1]!,
    reason: new TextDecoder().decode(payload.subarray(2)),
  };
}

/** The largest frame payload, and the largest whole message, accepted. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The payload of every empty frame (never written to). */
const NO_PAYLOAD = new Uint8Array(0);

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
   * import { FrameParser } from "./websocket_frames.ts";
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
   * import { FrameParser } from "./websocket_frames.ts";
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

/** A whole message: text already checked as UTF-8, or binary. */
export type Message = string | Uint8Array;

/**
 * Joins data frames into messages (RFC 6455 §5.4), bounding the whole
 * message, not only each frame: endless non-final fragments would otherwise
 * grow without limit. Fragments are copied into one buffer that grows
 * geometrically, never kept one by one: a fragment's bytes are all it
 * costs, so empty fragments (2 bytes each on the wire) hold nothing, where
 * a list of them held an object per fragment, about 100 times their size.
 * The copying stays linear, and a message in one frame is not copied.
 */
export class MessageAssembler {
  #buffer: Uint8Array = NO_PAYLOAD;
  #size = 0;
  #opcode: number | null = null;
  #last = 0;
  #maxMessage: number;

  /**
   * @param maxMessage Largest whole message accepted, in bytes.
   */
  constructor(maxMessage: number = MAX_MESSAGE_BYTES) {
    this.#maxMessage = maxMessage;
  }

  /** Bytes held for a message not yet finished. */
  get heldBytes(): number {
    return this.#size;
  }

  /** The payload bytes of the last message returned (UTF-8 for text). */
  get lastMessageBytes(): number {
    return this.#last;
  }

  /**
   * Bytes allocated for a message not yet finished: at most twice
   * {@linkcode heldBytes} and never past the message limit, however many
   * fragments brought them.
   */
  get heldCapacity(): number {
    return this.#buffer.length;
  }

  /**
   * Adds a data frame.
   *
   * @param frame A text, binary or continuation frame.
   * @returns The message it finishes, or `null`.
   * @throws {FrameError} 1002 on a continuation outside a message or a new
   * message inside one, 1009 past the size limit, 1007 on text that is not
   * UTF-8 (RFC 6455 §8.1).
   *
   * @example Empty fragments hold nothing
   * ```ts
   * import { MessageAssembler, OPCODE } from "./websocket_frames.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const m = new MessageAssembler();
   * m.add({ fin: false, opcode: OPCODE.text, payload: new Uint8Array([104]) });
   * const empty = { fin: false, opcode: OPCODE.continuation, payload: new Uint8Array(0) };
   * for (let i = 0; i < 100_000; i++) m.add(empty);
   * strictEqual(m.heldCapacity <= 64, true);
   * strictEqual(m.add({ ...empty, fin: true, payload: new Uint8Array([105]) }), "hi");
   * ```
   */
  add(frame: Frame): Message | null {
    const continuation = frame.opcode === OPCODE.continuation;
    if (continuation !== (this.#opcode !== null)) {
      throw new FrameError(
        continuation
          ? "a continuation frame outside a message"
          : "a new message inside a fragmented one",
      );
    }
    const payload = frame.payload;
    if (this.#size + payload.length > this.#maxMessage) {
      this.#reset();
      throw new FrameError("too big message", 1009);
    }
    let whole: Uint8Array;
    let opcode: number;
    if (!continuation) {
      opcode = frame.opcode;
      if (!frame.fin) {
        this.#opcode = opcode;
        this.#append(payload);
        return null;
      }
      whole = payload; // a message in one frame: no copy
    } else {
      this.#append(payload);
      if (!frame.fin) return null;
      opcode = this.#opcode!;
      whole = this.#buffer.subarray(0, this.#size);
      this.#reset();
    }
    this.#last = whole.length;
    if (opcode !== OPCODE.text) return whole;
    try {
      return UTF8.decode(whole);
    } catch {
      throw new FrameError("invalid UTF-8 in a text message", 1007);
    }
  }

  /** Copies a fragment in, regrowing to at least double, up to the limit. */
  #append(payload: Uint8Array): void {
    if (payload.length === 0) return;
    const needed = this.#size + payload.length;
    if (needed > this.#buffer.length) {
      const grown = new Uint8Array(
        Math.min(
          this.#maxMessage,
          Math.max(needed, this.#buffer.length * 2, MIN_MESSAGE_BUFFER),
        ),
      );
      grown.set(this.#buffer.subarray(0, this.#size));
      this.#buffer = grown;
    }
    this.#buffer.set(payload, this.#size);
    this.#size = needed;
  }

  /** Lets go of a finished or refused message's bytes. */
  #reset(): void {
    this.#buffer = NO_PAYLOAD;
    this.#size = 0;
    this.#opcode = null;
  }
}

/** The first buffer of a fragmented message. */
const MIN_MESSAGE_BUFFER = 64;

/**
 * Text must be valid UTF-8 (RFC 6455 §8.1); a lenient decoder would hand
 * the browser U+FFFD instead of the bytes sent.
 */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The code a close frame may carry for a close that ended with `code`
 * (RFC 6455 §7.4): a defined code or one from 3000–4999 as it is; none for
 * "no status received" (1005); 1001 "going away" for a connection that
 * ended without a valid code (Deno reports a dropped one as 0 or 1006, and
 * 1006 and 1015 must never be sent, §7.4.1).
 *
 * @param code The code the close ended with, if any.
 * @returns The code to send, or `undefined` for a frame without one.
 *
 * @example Usage
 * ```ts
 * import { sendableCloseCode } from "./websocket_frames.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(sendableCloseCode(1000), 1000);
 * strictEqual(sendableCloseCode(0), 1001);
 * strictEqual(sendableCloseCode(1005), undefined);
 * ```
 */
export function sendableCloseCode(
  code: number | undefined,
): number | undefined {
  if (code === undefined || code === 1005) return undefined;
  const defined = code >= 1000 && code <= 1014 && code !== 1004 &&
    code !== 1005 && code !== 1006;
  return defined || (code >= 3000 && code <= 4999) ? code : 1001;
}
