/**
 * The upstream client's idle connections (nginx's `keepalive N` cache):
 * last in, first out, each watched by a pending read while it waits, and
 * closed after `idleTimeoutMs` by one sweep a second.
 *
 * A request that must not be sent twice (POST, PATCH, LOCK) takes only a
 * connection idle for less than {@linkcode NON_IDEMPOTENT_IDLE_MS}, and
 * less than half the shortest idle time after which this upstream was
 * seen to close one: an upstream closes a kept connection at its idle
 * timeout, and one used more recently than that cannot be closing as the
 * request crosses it. A lesson is forgotten {@linkcode RELEARN_MS} after
 * the last one: an upstream that restarts closes every kept connection
 * whatever its idle time, and remembering that for the life of the process
 * would send every later POST over a new connection. HTTP/1.1 gives no proof that a request which met a
 * close was not processed (RFC 9112 §9.3.1), so such a request is never
 * resent; nginx 1.22 takes any kept connection for it and answers 502 on
 * that race (ngx_http_upstream_next's non-idempotent rule).
 *
 * @module
 */

import type { Connection } from "./connection.ts";

/**
 * A non-idempotent request takes no connection idle this long (ms): a
 * quarter of the shortest idle timeout application servers ship with
 * (gunicorn 2 s; Node, Apache and uvicorn 5 s; Tomcat 20 s) and half of a
 * 1 s one, leaving room for a loaded host's delays. A shorter timeout is
 * learned from the closes seen.
 */
export const NON_IDEMPOTENT_IDLE_MS = 500;

/**
 * A learned bound lasts this long after the last close that taught it
 * (ms); then {@linkcode NON_IDEMPOTENT_IDLE_MS} holds again until the
 * next. An upstream with a short idle timeout teaches it again at its next
 * close; at worst one request a minute meets the race nginx always takes.
 */
export const RELEARN_MS = 60_000;

/** Options for {@linkcode IdlePool}. */
export interface IdlePoolOptions {
  /** Connections kept at most; 0 keeps none. */
  maxIdle: number;
  /** Close a connection idle this long (nginx `keepalive_timeout`). */
  idleTimeoutMs: number;
  /** The clock idle times are measured by, in milliseconds (tests). */
  now?: () => number;
}

/** The idle connections of one upstream server. */
export class IdlePool {
  #idle: Connection[] = [];
  #maxIdle: number;
  #idleTimeoutMs: number;
  #closed = false;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #now: () => number;
  /** Idle time a non-idempotent request's connection must stay under (ms). */
  #riskyIdleMs = NON_IDEMPOTENT_IDLE_MS;
  /** When the last close taught {@linkcode riskyIdleMs} (clock ms). */
  #learnedAt = 0;

  /** @param options Size, idle timeout and clock. */
  constructor(options: IdlePoolOptions) {
    this.#maxIdle = options.maxIdle;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#now = options.now ?? Date.now;
  }

  /** How long a connection may have been idle for a non-idempotent request (ms). */
  get riskyIdleMs(): number {
    if (
      this.#riskyIdleMs < NON_IDEMPOTENT_IDLE_MS &&
      this.#now() - this.#learnedAt >= RELEARN_MS
    ) {
      this.#riskyIdleMs = NON_IDEMPOTENT_IDLE_MS;
    }
    return this.#riskyIdleMs;
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
   * @param risky For a request that must not be sent twice: only a
   * connection idle less than {@linkcode riskyIdleMs}; older ones stay for
   * other requests (the newest is the least idle, so none would do).
   * @returns A connection marked `reused`, or `null`.
   */
  take(risky = false): Connection | null {
    while (this.#idle.length > 0) {
      const c = this.#idle.at(-1)!;
      if (
        risky && !c.closed &&
        this.#now() - c.idleSince >= this.riskyIdleMs
      ) {
        return null;
      }
      this.#idle.pop();
      if (c.closed) continue;
      c.reused = true;
      c.idleMs = this.#now() - c.idleSince;
      return c;
    }
    return null;
  }

  /**
   * The upstream closed a connection idle this long (ms), as the pending
   * read saw or an exchange met: a non-idempotent request takes none idle
   * half as long for the next {@linkcode RELEARN_MS}.
   *
   * @param idleMs How long it had been idle.
   */
  closedAfter(idleMs: number): void {
    const half = Math.max(0, Math.floor(idleMs / 2));
    if (half < this.riskyIdleMs) this.#riskyIdleMs = half;
    this.#learnedAt = this.#now();
  }

  /**
   * Takes back a connection whose exchange is complete, or closes it when
   * the pool is closed or keeps none (a connection holding bytes past its
   * answer never comes here: `endOfAnswer` closes it). A full pool closes
   * its oldest idle connection for this one, as nginx's keepalive cache
   * drops its least recently used (ngx_http_upstream_free_keepalive_peer):
   * closing the one coming back kept the stale ones, which a POST refuses
   * (`take(true)`), so after a lull every POST past the fresh few opened a
   * connection and closed it (4 in 10 small POSTs at 50 connections).
   *
   * @param c The connection.
   */
  put(c: Connection): void {
    if (this.#closed || c.closed || this.#maxIdle <= 0) {
      c.close();
      return;
    }
    // Out of the list before its close: its idle read's settling then
    // finds it gone and teaches nothing (#settled).
    if (this.#idle.length >= this.#maxIdle) this.#idle.shift()!.close();
    c.idleSince = this.#now();
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
      // Only the upstream ends a read of a connection still pooled (the
      // pool's own closes take it out first).
      if (typeof result !== "number") {
        this.closedAfter(this.#now() - c.idleSince);
      }
      c.close();
    }
    return result;
  }

  #sweep(): void {
    const oldest = this.#now() - this.#idleTimeoutMs;
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
