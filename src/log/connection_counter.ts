/**
 * nginx's `*N` connection serial numbers.
 *
 * nginx numbers connections from one global counter, client and upstream
 * alike (`ngx_event_accept.c`, `ngx_event_connect.c`): requests on one
 * keep-alive connection share a number, a new connection takes the next one,
 * and every upstream connect attempt uses one up.
 * `Deno.serve` does not expose connections, but while a connection is open
 * its remote address and port are unique, so they identify it. Entries are
 * forgotten after `idleMs` without a request (nginx's `keepalive_timeout`
 * 75 s) and the map is capped, so it cannot grow without bound.
 *
 * @module
 */

const REPLACE_MS = 1000;

/** Options for {@linkcode ConnectionCounter}. */
export interface ConnectionCounterOptions {
  /** @default {75_000} */
  idleMs?: number;
  /** @default {4096} */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/** Assigns nginx-style connection numbers. */
export class ConnectionCounter {
  #next = 1;
  #clients = 0;
  #byPeer = new Map<
    string,
    { serial: number; seen: number; placed: number }
  >();
  #idleMs: number;
  #maxEntries: number;
  #now: () => number;

  /**
   * Creates a counter starting at 1.
   *
   * @param options Expiry and size options.
   */
  constructor(options: ConnectionCounterOptions = {}) {
    this.#idleMs = options.idleMs ?? 75_000;
    this.#maxEntries = options.maxEntries ?? 4096;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The serial of the client connection a request arrived on.
   *
   * @param hostname The peer address.
   * @param port The peer port.
   * @returns The connection's number.
   *
   * @example Usage
   * ```ts
   * import { ConnectionCounter } from "./connection_counter.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const c = new ConnectionCounter();
   * strictEqual(c.forPeer("127.0.0.1", 50000), 1);
   * strictEqual(c.forPeer("127.0.0.1", 50000), 1);
   * strictEqual(c.forPeer("127.0.0.1", 50001), 2);
   * ```
   */
  forPeer(hostname: string, port: number): number {
    const key = `${hostname}|${port}`;
    const now = this.#now();
    const known = this.#byPeer.get(key);
    if (known !== undefined && now - known.seen < this.#idleMs) {
      known.seen = now;
      // Re-inserted so the map stays in (roughly) least-recently-seen order
      // for #evict, but at most once a second: a delete and a set on every
      // request churned the map's table.
      if (now - known.placed >= REPLACE_MS) {
        this.#byPeer.delete(key);
        known.placed = now;
        this.#byPeer.set(key, known);
      }
      return known.serial;
    }
    if (known !== undefined) this.#byPeer.delete(key);
    this.#clients++;
    const entry = { serial: this.#take(), seen: now, placed: now };
    this.#byPeer.set(key, entry);
    this.#evict(now);
    return entry.serial;
  }

  /**
   * Uses up a number for an upstream connection attempt, as nginx does.
   *
   * @returns The number taken.
   */
  take(): number {
    return this.#take();
  }

  /** How many client connections have been seen since start (`stub_status`'s accepts). */
  get clients(): number {
    return this.#clients;
  }

  /** How many client connections are remembered (for tests and status). */
  get size(): number {
    return this.#byPeer.size;
  }

  #take(): number {
    const n = this.#next;
    this.#next = n >= Number.MAX_SAFE_INTEGER ? 1 : n + 1;
    return n;
  }

  #evict(now: number): void {
    // In insertion order, which is last-seen order to within REPLACE_MS: an
    // entry seen since it was placed can stop the walk early, leaving an
    // expired one behind it until a later call; the cap still holds.
    for (const [key, entry] of this.#byPeer) {
      if (
        this.#byPeer.size <= this.#maxEntries && now - entry.seen < this.#idleMs
      ) break;
      this.#byPeer.delete(key);
    }
  }
}
