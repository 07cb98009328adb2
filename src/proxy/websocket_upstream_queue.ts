/**
 * A tunnel's frames towards the upstream: masked, queued in order and
 * written by one writer, small ones joined into one write. Nothing can
 * push back on the browser (Deno's server socket delivers every message and
 * cannot be paused), so the queue is bounded: past
 * {@linkcode UPSTREAM_QUEUE_LIMIT} a frame is refused and the tunnel ends.
 *
 * @module
 */

import { MESSAGE_COST } from "./websocket_client_queue.ts";
import { encodeFrame } from "./websocket_frames.ts";

/**
 * What may be queued towards an upstream that is not reading, past which
 * the tunnel is closed: bytes, and `MESSAGE_COST` per frame, so that a
 * browser's flood of empty messages (6 bytes each) is refused before it
 * holds an array each (about 500 bytes). nginx holds one
 * `proxy_buffer_size` (4k|8k) per direction; 4 MiB is about 500 of those,
 * or some 4,000 small messages, well over a station app's bursts, while the
 * kernel's socket buffers already absorb several MB more before anything
 * queues here. One message larger than this is still accepted when nothing
 * else is queued: Deno's server socket already refuses messages over 64
 * MiB, so a tunnel holds at most that.
 */
export const UPSTREAM_QUEUE_LIMIT = 4 * 1024 * 1024;

/** Queued frames are joined into writes of up to this many bytes. */
const WRITE_JOIN_BYTES = 64 * 1024;

/** The peak across all queues, read by tests to bound memory without RSS. */
export const upstreamQueuePeak = {
  /**
   * The highest cost (bytes and `MESSAGE_COST` per frame) ever queued
   * towards one upstream.
   */
  cost: 0,
};

/** A frame the queue refused: what was queued, and the frame's size. */
export interface Refusal {
  /** Bytes queued. */
  queuedBytes: number;
  /** The refused frame's bytes. */
  refused: number;
}

/** Frames towards one upstream connection. */
export class UpstreamQueue {
  #conn: Deno.Conn;
  #onWriteFailed: () => void;
  #outbox: Uint8Array[] = [];
  #writer: Promise<void> | null = null;
  /** What the outbox and the write under way hold, at their cost. */
  #queued = 0;
  /** Their bytes alone, for the log line. */
  #queuedBytes = 0;

  /**
   * @param conn The upstream's upgraded connection.
   * @param onWriteFailed Told once when a write fails (the queue is dropped).
   */
  constructor(conn: Deno.Conn, onWriteFailed: () => void) {
    this.#conn = conn;
    this.#onWriteFailed = onWriteFailed;
  }

  /**
   * Queues one masked frame after the ones before it.
   *
   * @param opcode The opcode.
   * @param payload The payload.
   * @returns `null`, or the refusal when the queue is full.
   */
  send(opcode: number, payload: Uint8Array): Refusal | null {
    const frame = encodeFrame(
      opcode,
      payload,
      crypto.getRandomValues(new Uint8Array(4)),
    );
    const cost = frame.length + MESSAGE_COST;
    if (this.#queued > 0 && this.#queued + cost > UPSTREAM_QUEUE_LIMIT) {
      return { queuedBytes: this.#queuedBytes, refused: frame.length };
    }
    this.#queued += cost;
    this.#queuedBytes += frame.length;
    upstreamQueuePeak.cost = Math.max(upstreamQueuePeak.cost, this.#queued);
    this.#outbox.push(frame);
    this.#writer ??= this.#writeOut();
    return null;
  }

  /**
   * Gives a close frame a moment to leave, then drops the connection; an
   * upstream that is not reading gets a second at most, so its queued
   * frames are let go with the connection.
   */
  close(): void {
    const conn = this.#conn;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(cap);
      try {
        conn.close();
      } catch { /* already closed */ }
    };
    const cap = setTimeout(close, 1000);
    (this.#writer ?? Promise.resolve()).finally(() => setTimeout(close, 50));
  }

  /**
   * Writes the outbox until it is empty, small frames (pongs, short
   * messages) joined into one write so a burst costs a few syscalls.
   */
  async #writeOut(): Promise<void> {
    const conn = this.#conn;
    try {
      while (this.#outbox.length > 0) {
        let take = 1;
        let size = this.#outbox[0]!.length;
        while (
          take < this.#outbox.length &&
          size + this.#outbox[take]!.length <= WRITE_JOIN_BYTES
        ) size += this.#outbox[take++]!.length;
        const parts = this.#outbox.splice(0, take);
        const chunk = take === 1 ? parts[0]! : new Uint8Array(size);
        if (take > 1) {
          parts.reduce((at, f) => (chunk.set(f, at), at + f.length), 0);
        }
        let n = 0;
        while (n < chunk.length) n += await conn.write(chunk.subarray(n));
        this.#queued -= size + take * MESSAGE_COST;
        this.#queuedBytes -= size;
      }
    } catch {
      this.#outbox = [];
      this.#onWriteFailed();
    } finally {
      this.#writer = null;
    }
  }
}
