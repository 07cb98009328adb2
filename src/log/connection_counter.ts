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
 * 75 s) and their number is capped, so they cannot grow without bound.
 *
 * @module
 */

const REPLACE_MS = 1000;

/** One remembered client connection. */
interface Peer {
  readonly host: string;
  readonly port: number;
  readonly serial: number;
  seen: number;
  placed: number;
  /** Requests seen on it: nginx's `$connection_requests`. */
  requests: number;
}

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
  /**
   * How many requests the connection {@linkcode forPeer} last named has
   * carried, this one included (nginx's `$connection_requests`).
   */
  lastRequests = 0;
  #next = 1;
  #clients = 0;
  /**
   * The connections by address, then by port: a number key and the one
   * address of most clients (loopback on a station) cost no string built
   * and hashed per request, which `${address}|${port}` did (0.86 against
   * 0.10 µs a look-up in a loop of 50 connections).
   */
  #byHost = new Map<string, Map<number, Peer>>();
  /** The last address asked for and its ports: most requests ask it again. */
  #lastHost: string | null = null;
  #lastPorts: Map<number, Peer> | null = null;
  /** Every remembered connection in (roughly) least-recently-seen order. */
  #order = new Set<Peer>();
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
   * @param now The request's clock in ms, read once for all its uses;
   * the counter's own clock when absent.
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
  forPeer(hostname: string, port: number, now: number = this.#now()): number {
    let ports = this.#lastPorts;
    if (hostname !== this.#lastHost) {
      ports = this.#byHost.get(hostname) ?? null;
      if (ports !== null) {
        this.#lastHost = hostname;
        this.#lastPorts = ports;
      }
    }
    const known = ports?.get(port);
    if (known !== undefined && now - known.seen < this.#idleMs) {
      known.seen = now;
      // Re-inserted so the order stays (roughly) least-recently-seen for
      // #evict, but at most once a second: a delete and an add on every
      // request churned the table.
      if (now - known.placed >= REPLACE_MS) {
        this.#order.delete(known);
        known.placed = now;
        this.#order.add(known);
      }
      this.lastRequests = ++known.requests;
      return known.serial;
    }
    if (known !== undefined) this.#forget(known);
    this.#clients++;
    const entry: Peer = {
      host: hostname,
      port,
      serial: this.#take(),
      seen: now,
      placed: now,
      requests: 1,
    };
    this.lastRequests = 1;
    // Looked up again: #forget may have dropped the address's ports.
    this.#portsOf(hostname).set(port, entry);
    this.#order.add(entry);
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
    return this.#order.size;
  }

  #take(): number {
    const n = this.#next;
    this.#next = n >= Number.MAX_SAFE_INTEGER ? 1 : n + 1;
    return n;
  }

  /** The ports of an address, made when it has none. */
  #portsOf(hostname: string): Map<number, Peer> {
    let ports = this.#byHost.get(hostname);
    if (ports === undefined) {
      ports = new Map();
      this.#byHost.set(hostname, ports);
    }
    this.#lastHost = hostname;
    this.#lastPorts = ports;
    return ports;
  }

  /** Drops a connection, and its address once it has no other. */
  #forget(peer: Peer): void {
    this.#order.delete(peer);
    const ports = this.#byHost.get(peer.host);
    if (ports === undefined) return;
    ports.delete(peer.port);
    if (ports.size > 0) return;
    this.#byHost.delete(peer.host);
    if (this.#lastPorts === ports) {
      this.#lastHost = null;
      this.#lastPorts = null;
    }
  }

  #evict(now: number): void {
    // In insertion order, which is last-seen order to within REPLACE_MS: an
    // entry seen since it was placed can stop the walk early, leaving an
    // expired one behind it until a later call; the cap still holds.
    for (const entry of this.#order) {
      if (
        this.#order.size <= this.#maxEntries && now - entry.seen < this.#idleMs
      ) break;
      this.#forget(entry);
    }
  }
}
