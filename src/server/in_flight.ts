/**
 * The requests whose access line is not written yet, so a shutdown that
 * stops waiting for them can still log each one. nginx does the same when
 * `worker_shutdown_timeout` expires: `ngx_shutdown_timer_handler()` closes
 * every connection and each request is logged with what it had sent, `000 0`
 * for one still waiting on its upstream.
 *
 * @module
 */

/** A registry of requests in flight, each with its "give up" callback. */
export class InFlightRequests {
  #open = new Set<() => void>();
  /**
   * Set when a stop signal arrived: `Deno.serve`'s shutdown then ends the
   * request bodies still being read, which is not the client leaving.
   */
  stopping = false;

  /**
   * Registers a request.
   *
   * @param abandon Writes the request's line when the gateway gives up on it.
   * @returns Removes the request (call it once its line is written).
   *
   * @example Usage
   * ```ts
   * import { InFlightRequests } from "./in_flight.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const inFlight = new InFlightRequests();
   * const lines: string[] = [];
   * const done = inFlight.add(() => lines.push("a 000"));
   * inFlight.add(() => lines.push("b 000"));
   * done();
   * strictEqual(inFlight.abandonAll(), 1);
   * strictEqual(lines.join(), "b 000");
   * ```
   */
  add(abandon: () => void): () => void {
    this.#open.add(abandon);
    return () => this.#open.delete(abandon);
  }

  /** How many requests are in flight. */
  get size(): number {
    return this.#open.size;
  }

  /**
   * Gives up on every request in flight, calling each callback once.
   *
   * @returns How many there were.
   */
  abandonAll(): number {
    const open = [...this.#open];
    this.#open.clear();
    for (const abandon of open) {
      try {
        abandon();
      } catch {
        // One line that cannot be written must not cost the others theirs.
      }
    }
    return open.length;
  }
}
