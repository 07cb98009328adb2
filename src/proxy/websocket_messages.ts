/**
 * WebSocket data frames joined into messages (RFC 6455 §5.4), the whole
 * message bounded and text checked as UTF-8 (§8.1).
 *
 * @module
 */

import {
  type Frame,
  FrameError,
  MAX_MESSAGE_BYTES,
  NO_PAYLOAD,
  OPCODE,
} from "./websocket_frame_types.ts";

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
   * import { MessageAssembler } from "./websocket_messages.ts";
   * import { OPCODE } from "./websocket_frame_types.ts";
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
