/**
 * The upstream client's deadlines, kept the way nginx keeps its timer tree:
 * one interval per client, running only while operations are in flight,
 * instead of a timer armed and cleared around every read and write, which
 * cost more than the write itself.
 * Timeouts fire within {@linkcode WATCHDOG_MS}.
 *
 * It also reads a call's lazy client signal once the call has waited a full
 * period (see `UpstreamCall.signal`).
 *
 * @module
 */

import type { ClientWatch, Connection } from "./connection.ts";

/** How often the watchdog looks for expired operations, in milliseconds. */
export const WATCHDOG_MS = 50;

/**
 * Deadlines of reads and writes, and the calls whose client may need
 * watching.
 *
 * @example An expired read closes its connection
 * ```ts ignore
 * const watchdog = new Watchdog();
 * watchdog.arm(connection, 60_000); // proxy_read_timeout
 * const n = await connection.conn.read(buf); // fails once closed
 * connection.deadline = 0; // done: the next tick forgets it
 * ```
 */
export class Watchdog {
  #timed = new Set<Connection>();
  #watches = new Set<ClientWatch>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * Starts the deadline of one read or write. The caller awaits the
   * operation inline, turns its failure into a timeout when `c.expired`, and
   * sets `c.deadline` back to 0 (no wrapper closure or extra promise per
   * operation).
   *
   * @param c The connection.
   * @param ms The timeout.
   */
  arm(c: Connection, ms: number): void {
    c.deadline = Date.now() + ms;
    this.#timed.add(c);
    this.#start();
  }

  /**
   * Reads a call's lazy signal once the call has waited a full period.
   *
   * @param w The call's watch.
   */
  watch(w: ClientWatch): void {
    this.#watches.add(w);
    this.#start();
  }

  /**
   * Forgets a call that ended.
   *
   * @param w The call's watch.
   */
  unwatch(w: ClientWatch): void {
    this.#watches.delete(w);
  }

  /** Stops the interval and forgets everything. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#timed.clear();
    this.#watches.clear();
  }

  #start(): void {
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), WATCHDOG_MS);
      Deno.unrefTimer(this.#timer as unknown as number);
    }
  }

  #tick(): void {
    const now = Date.now();
    for (const c of this.#timed) {
      if (c.closed || c.deadline === 0) {
        this.#timed.delete(c);
      } else if (now >= c.deadline) {
        this.#timed.delete(c);
        c.expired = true;
        c.close(); // fails the pending read or write
      }
    }
    // A call still waiting after a full period: now the client is watched.
    for (const w of this.#watches) {
      if (!w.pending) this.#watches.delete(w);
      else if (now - w.since >= WATCHDOG_MS) {
        this.#watches.delete(w);
        w.attach();
      }
    }
    if (this.#timed.size === 0 && this.#watches.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
