/**
 * WebSocket framing (RFC 6455 §5) for the upstream side of a tunnel, where
 * the gateway is the client: frames it sends are masked, frames it receives
 * are not. Pure: the encoding is here; the parser is in
 * `websocket_frame_parser.ts`, the messages in `websocket_messages.ts`, the
 * close frames in `websocket_close.ts`, the names they share in
 * `websocket_frame_types.ts`. The tunnel takes all of framing from this
 * file, so it hands those on.
 *
 * @module
 */

export {
  type Frame,
  FrameError,
  MAX_MESSAGE_BYTES,
  OPCODE,
} from "./websocket_frame_types.ts";
export { FrameParser } from "./websocket_frame_parser.ts";
export { type Message, MessageAssembler } from "./websocket_messages.ts";
export {
  closePayload,
  parseClosePayload,
  sendableCloseCode,
} from "./websocket_close.ts";

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
