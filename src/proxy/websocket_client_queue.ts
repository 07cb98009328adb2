/**
 * What a tunnel has sent towards the browser and the runtime has not yet
 * written, counted as the memory it holds: its bytes and, per message,
 * {@linkcode MESSAGE_COST}. Deno's server socket makes a task per `send()`
 * (`op_ws_send_text`/`op_ws_send_binary` in `ext/websocket`), about 1 KB
 * even for an empty message, while its `bufferedAmount` counts payload bytes
 * only: a browser that reads nothing, sent empty messages, showed none and
 * held 1 GB per million. So the count of messages not yet written is
 * inferred: the runtime writes them in order (one lock, taken in turn), so
 * the payload bytes written so far (sent less `bufferedAmount`) say which
 * are done. An empty message is known written only once a later message
 * with bytes is: until then it is counted as held, so a run of empty
 * messages pauses the tunnel as bytes would.
 *
 * @module
 */

import type { Message } from "./websocket_messages.ts";

/**
 * What one message costs beyond its payload while held here or queued in
 * the runtime: measured, a pending `send()` of an empty message in Deno
 * 2.9.6 held about 1,000 bytes of RSS, a small array or string here about
 * 500.
 */
export const MESSAGE_COST = 1024;

/** Past this many messages known written, the list left is compacted. */
const COMPACT_AT = 1024;

/**
 * Messages towards the browser: held until its side opens, then handed to
 * the runtime, with the cost of those not yet written.
 *
 * @example Empty messages count while they may be queued
 * ```ts
 * import { ClientQueue, MESSAGE_COST } from "./websocket_client_queue.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const sent: unknown[] = [];
 * const socket = { bufferedAmount: 0, send: (m: unknown) => sent.push(m) };
 * const queue = new ClientQueue(socket as unknown as WebSocket);
 * queue.send("", 0); // held: the browser's side is not open yet
 * strictEqual(queue.cost(), MESSAGE_COST);
 * queue.open();
 * queue.send("", 0);
 * strictEqual(sent.length, 2);
 * strictEqual(queue.cost(), 2 * MESSAGE_COST);
 * queue.send("hi", 2); // written at once: bufferedAmount stays 0
 * strictEqual(queue.cost(), 0);
 * ```
 */
export class ClientQueue {
  #client: WebSocket;
  #open = false;
  /** Messages before the browser's side opened, and their cost. */
  #pending: Message[] = [];
  #pendingSizes: number[] = [];
  #pendingCost = 0;
  /** Payload bytes handed to the runtime. */
  #sent = 0;
  /** Where the last message known written ended, in payload bytes sent. */
  #written = 0;
  /**
   * Each message not known written, in order: where it ends, times two,
   * plus one for an empty message.
   */
  #ends: number[] = [];
  #head = 0;

  /** @param client The browser's socket. */
  constructor(client: WebSocket) {
    this.#client = client;
  }

  /** The browser's side opened: what was held goes out. */
  open(): void {
    this.#open = true;
    const held = this.#pending;
    const sizes = this.#pendingSizes;
    this.#pending = [];
    this.#pendingSizes = [];
    this.#pendingCost = 0;
    for (let i = 0; i < held.length; i++) this.#hand(held[i]!, sizes[i]!);
  }

  /**
   * Sends a message, or holds it until the browser's side opens.
   *
   * @param data The message.
   * @param size Its payload's length in bytes (UTF-8 for text).
   */
  send(data: Message, size: number): void {
    if (this.#open) this.#hand(data, size);
    else {
      this.#pending.push(data);
      this.#pendingSizes.push(size);
      this.#pendingCost += size + MESSAGE_COST;
    }
  }

  /** Lets go of what is held (the tunnel ended). */
  clear(): void {
    this.#pending = [];
    this.#pendingSizes = [];
    this.#pendingCost = 0;
    this.#ends = [];
    this.#head = 0;
    this.#written = this.#sent;
  }

  /**
   * At least {@linkcode cost}, without asking the runtime: a check that
   * costs nothing while it is low.
   *
   * @returns The cost before any message is known written.
   */
  costBound(): number {
    return this.#pendingCost + (this.#sent - this.#written) +
      (this.#ends.length - this.#head) * MESSAGE_COST;
  }

  /**
   * What is held here and in the runtime: bytes, and
   * {@linkcode MESSAGE_COST} per message not known written.
   *
   * @returns The cost in bytes.
   */
  cost(): number {
    const ends = this.#ends;
    if (this.#head < ends.length) {
      const written = this.#sent - this.#client.bufferedAmount;
      let head = this.#head;
      while (head < ends.length) {
        const key = ends[head]!;
        const end = Math.floor(key / 2);
        // One with bytes ending here is written; an empty one is not known.
        if (end > written || (end === written && key % 2 === 1)) break;
        this.#written = end;
        head++;
      }
      if (head >= COMPACT_AT && head * 2 >= ends.length) {
        this.#ends = ends.slice(head);
        head = 0;
      }
      this.#head = head;
    }
    return this.costBound();
  }

  #hand(data: Message, size: number): void {
    this.#client.send(data);
    this.#sent += size;
    this.#ends.push(this.#sent * 2 + (size === 0 ? 1 : 0));
  }
}
