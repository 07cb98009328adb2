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

/** An incremental parser for frames from a server (unmasked). */
export class FrameParser {
  #buffer = new Uint8Array(0);
  #maxPayload: number;

  /**
   * @param maxPayload Largest frame payload accepted.
   */
  constructor(maxPayload = 64 * 1024 * 1024) {
    this.#maxPayload = maxPayload;
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
    const merged = new Uint8Array(this.#buffer.length + bytes.length);
    merged.set(this.#buffer);
    merged.set(bytes, this.#buffer.length);
    const frames: Frame[] = [];
    let at = 0;
    while (merged.length - at >= 2) {
      const b0 = merged[at]!;
      const b1 = merged[at + 1]!;
      if (b0 & 0x70) throw new FrameError("reserved bits set");
      if (b1 & 0x80) throw new FrameError("masked frame from the server");
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (merged.length - at < 4) break;
        length = (merged[at + 2]! << 8) | merged[at + 3]!;
        header = 4;
      } else if (length === 127) {
        if (merged.length - at < 10) break;
        const big = new DataView(merged.buffer, merged.byteOffset + at + 2, 8)
          .getBigUint64(0);
        if (big > BigInt(this.#maxPayload)) {
          throw new FrameError("frame too big", 1009);
        }
        length = Number(big);
        header = 10;
      }
      if (opcode >= 0x8 && (!fin || length > 125)) {
        throw new FrameError("invalid control frame");
      }
      if (length > this.#maxPayload) {
        throw new FrameError("frame too big", 1009);
      }
      if (merged.length - at < header + length) break;
      frames.push({
        fin,
        opcode,
        payload: merged.slice(at + header, at + header + length),
      });
      at += header + length;
    }
    this.#buffer = merged.slice(at);
    return frames;
  }
}
