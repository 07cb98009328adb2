/**
 * The upstream client's per-connection and per-call state: a connection with
 * its reusable buffers and deadline, and the watch on a call's client.
 *
 * @module
 */

import type { UpstreamTimeouts } from "./types.ts";

/** Bytes of the buffer a connection reuses for response heads and small requests. */
export const SCRATCH_SIZE = 16 * 1024;
/** Shared, never written: a connection with no bytes left over. */
export const EMPTY: Uint8Array = new Uint8Array(0);
/** The `onAbort` of a phase that has nothing to stop. */
export const NOTHING = (): void => {};

/** One upstream connection and what the client keeps about it. */
export class Connection {
  /** The socket. */
  conn: Deno.TcpConn;
  /** Taken from the pool, not fresh: a failure before any byte may be stale. */
  reused = false;
  /**
   * The upstream answered before the request body was sent whole: the
   * connection is closed after this exchange, never kept.
   */
  abandoned = false;
  /** When it went back to the pool (epoch ms). */
  idleSince = 0;
  /** How long it had been idle when taken from the pool (ms). */
  idleMs = 0;
  /** The read pending while it sits in the pool: settles with bytes, EOF or an error. */
  idleRead: Promise<number | null | Error> | null = null;
  /** The buffer that read fills. */
  idleBuf: Uint8Array | null = null;
  /** Reused for reads of the response head; what is kept is copied out. */
  scratch = new Uint8Array(SCRATCH_SIZE);
  /**
   * Reused for request heads with small bodies: a write has finished with
   * its bytes when it settles, and one exchange at a time uses a connection.
   */
  out: Uint8Array | null = null;
  closed = false;
  /** When the current read or write times out (epoch ms); 0 when none. */
  deadline = 0;
  /** The watchdog closed the connection because a deadline passed. */
  expired = false;
  /** The timers of the call using it, when it brought its own (a location's). */
  timeouts: UpstreamTimeouts | null = null;

  /** @param conn A connected socket. */
  constructor(conn: Deno.TcpConn) {
    this.conn = conn;
  }

  /** Closes the socket once; later calls do nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/** A timer fired first (nginx's send or read timeout). */
export class TimerExpired extends Error {}

/**
 * Watches one call's client for going away, on behalf of the current phase
 * (connecting, or sending and waiting for the head), whose `onAbort` stops
 * it. A lazy signal is read by the watchdog (see `UpstreamCall.signal`).
 */
export class ClientWatch {
  #source: (() => AbortSignal) | { readonly signal: AbortSignal } | null;
  #signal: AbortSignal | null = null;
  /** When the call started (epoch ms). */
  since: number;
  /** Stops the current phase; set by each phase. */
  onAbort: () => void = NOTHING;
  // Made when a signal is attached, which nearly no call lives long enough
  // for: a closure per call is garbage per request.
  #listener: (() => void) | null = null;

  /**
   * @param source The client's signal, or what reads it later: a function,
   * or an object whose `signal` it is (the client's `Request`).
   * @param now The call's start (epoch ms).
   */
  constructor(
    source: AbortSignal | (() => AbortSignal) | {
      readonly signal: AbortSignal;
    },
    now: number,
  ) {
    this.since = now;
    if (source instanceof AbortSignal) {
      this.#source = null;
      this.#attach(source);
    } else {
      this.#source = source;
    }
  }

  /** Whether the client is known to be gone. */
  get aborted(): boolean {
    return this.#signal?.aborted === true;
  }

  /** Whether the lazy signal has yet to be read. */
  get pending(): boolean {
    return this.#source !== null;
  }

  /** Reads the lazy signal and starts listening. */
  attach(): void {
    const source = this.#source;
    if (source === null) return;
    this.#source = null;
    this.#attach(typeof source === "function" ? source() : source.signal);
  }

  #attach(signal: AbortSignal): void {
    this.#signal = signal;
    // A client gone before the lazy signal was read gets no abort event.
    if (signal.aborted) return this.onAbort();
    this.#listener = () => this.onAbort();
    signal.addEventListener("abort", this.#listener, { once: true });
  }

  /** Stops listening. */
  detach(): void {
    this.#source = null;
    if (this.#listener !== null) {
      this.#signal?.removeEventListener("abort", this.#listener);
    }
  }
}
