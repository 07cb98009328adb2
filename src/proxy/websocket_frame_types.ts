/**
 * What every stage of WebSocket framing (RFC 6455 §5) names: the opcodes,
 * a frame as read, the error a forbidden frame raises, and the largest
 * payload and message accepted.
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

/** The largest frame payload, and the largest whole message, accepted. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The payload of every empty frame (never written to). */
export const NO_PAYLOAD: Uint8Array = new Uint8Array(0);
