/**
 * The upstream client's idle connections (nginx's `keepalive N` cache):
 * last in, first out, each watched by a pending read while it waits, and
 * closed after `idleTimeoutMs` by one sweep a second.
 *
 * @module
 */

import type { Connection } from "./connection.ts";

/** Options for {@linkcode IdlePool}. */
export interface IdlePoolOptions {
  /** Connections kept at most; 0 keeps none. */
  maxIdle: number;
  /** Close a connection idle this long (nginx `keepalive_timeout`). */
  idleTimeoutMs: number;
}

/** The idle connections of one upstream server. */
export class IdlePool {
  #idle: Connection[] = [];
  #maxIdle: number;
  #idleTimeoutMs: number;
  #closed = false;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  /** @param options Size and idle timeout. */
  constructor(options: IdlePoolOptions) {
    this.#maxIdle = options.maxIdle;
    this.#idleTimeoutMs = options.idleTimeoutMs;
  }

  /** Idle connections held. */
  get size(): number {
    return this.#idle.length;
  }

  /** Closes every idle connection; later ones are closed when put back. */
  close(): void {
    this.#closed = true;
    for (const c of this.#idle.splice(0)) c.close();
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  /**
   * The most recently returned live connection, or `null`.
   *
   * @returns A connection marked `reused`, or `null`.
   */
  take(): Connection | null {
    while (this.#idle.length > 0) {
      const c = this.#idle.pop()!;
      if (c.closed) continue;
      c.reused = true;
      return c;
    }
    return null;
  }

  /**
   * Takes back a connection whose exchange is complete, or closes it when
   * the pool is closed or full or bytes are left over.
   *
   * @param c The connection.
   */
  put(c: Connection): void {
    if (
      this.#closed || c.closed || this.#idle.length >= this.#maxIdle ||
      c.pending.length > 0
    ) {
      c.close();
      return;
    }
    c.idleSince = Date.now();
    c.idleBuf = c.scratch;
    // A pending read while idle: it settles when the upstream closes the
    // connection (or, illegally, sends bytes), and the connection is dropped.
    // One promise for both outcomes (not .catch then .then): this runs
    // once per proxied request.
    c.idleRead = c.conn.read(c.idleBuf).then(
      (n) => this.#settled(c, n),
      (e) => this.#settled(c, e as Error),
    );
    // Idle connections past idleTimeoutMs are closed by one sweep per
    // second (a timer per returned connection was a timer per request).
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(() => this.#sweep(), 1000);
      Deno.unrefTimer(this.#sweeper as unknown as number);
    }
    this.#idle.push(c);
  }

  /**
   * A pooled connection's pending read settled: the upstream closed it (or
   * sent bytes it should not have), so it leaves the pool. If an exchange
   * picked it up meanwhile, that exchange sees `result` through `idleRead`.
   */
  #settled<T>(c: Connection, result: T): T {
    const at = this.#idle.indexOf(c);
    if (at !== -1) {
      this.#idle.splice(at, 1);
      c.close();
    }
    return result;
  }

  #sweep(): void {
    const oldest = Date.now() - this.#idleTimeoutMs;
    this.#idle = this.#idle.filter((c) => {
      if (c.closed) return false;
      if (c.idleSince > oldest) return true;
      c.close();
      return false;
    });
    if (this.#idle.length === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
