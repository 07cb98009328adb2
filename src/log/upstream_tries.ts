/**
 * The upstream tries of one request as the access log's `$upstream_*`
 * variables read them (`ngx_http_upstream_state_t`): each try's peer, the
 * status received (or nginx's 502/504 for a failed try), and when it
 * connected, had the response head and ended. Filled by the proxy as it
 * walks the group's servers, read once when the access line is written.
 *
 * @module
 */

import type { UpstreamTry } from "./log_record.ts";

/** One try while it runs: epoch ms, `null` until reached. */
interface RunningTry {
  addr: string;
  status: number;
  start: number;
  connected: number | null;
  header: number | null;
  end: number | null;
  newGroup: boolean;
}

/**
 * A request's upstream tries, in order. A proxied location that runs again
 * after an internal redirect (`error_page` to another proxied location)
 * starts a new group, which nginx's variables separate with ` : `.
 *
 * @example Usage
 * ```ts
 * import { UpstreamTries } from "./upstream_tries.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * let ms = 1000;
 * const tries = new UpstreamTries(() => ms);
 * tries.startGroup();
 * tries.begin("127.0.0.1:8080");
 * ms += 2;
 * tries.connected();
 * tries.failed(502);
 * tries.begin("127.0.0.1:8081");
 * tries.connected();
 * ms += 5;
 * tries.answered(200);
 * ms += 1;
 * deepStrictEqual(tries.list().map((t) => [t.addr, t.status, t.responseMs]), [
 *   ["127.0.0.1:8080", 502, 2],
 *   ["127.0.0.1:8081", 200, 6],
 * ]);
 * ```
 */
export class UpstreamTries {
  readonly #now: () => number;
  readonly #tries: RunningTry[] = [];
  #newGroup = false;

  /**
   * @param now The clock in epoch ms.
   */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A proxied location starts: after earlier tries, a new group. */
  startGroup(): void {
    if (this.#tries.length > 0) this.#newGroup = true;
  }

  /**
   * A try of one server begins.
   *
   * @param addr The peer, `host:port`.
   */
  begin(addr: string): void {
    this.#tries.push({
      addr,
      status: 0,
      start: this.#now(),
      connected: null,
      header: null,
      end: null,
      newGroup: this.#newGroup,
    });
    this.#newGroup = false;
  }

  /** The current try has its connection (a kept one at once). */
  connected = (): void => {
    const current = this.#tries.at(-1);
    if (current !== undefined) current.connected = this.#now();
  };

  /**
   * The current try's response head arrived.
   *
   * @param status The upstream's status.
   */
  answered(status: number): void {
    const current = this.#tries.at(-1);
    if (current === undefined) return;
    current.header = this.#now();
    current.status = status;
  }

  /**
   * The current try failed. Before its head arrived the try's status is
   * nginx's for the failure (`ngx_http_upstream_next`: 504 for a timeout,
   * else 502; none when the client left); after, the upstream's status
   * stands and only the try's end is taken.
   *
   * @param status 502, 504, or 499 (400 in the middle of its body, 408
   * when that body stalled) for a client that left.
   */
  failed(status: number): void {
    const current = this.#tries.at(-1);
    if (current === undefined || current.end !== null) return;
    current.end = this.#now();
    if (current.header === null) {
      current.status = status === 499 || status === 400 || status === 408
        ? 0
        : status;
    }
  }

  /**
   * No server of the group was available (`no live upstreams`): a try
   * named by the group, 502, that never connected.
   *
   * @param group The group's name.
   */
  noLive(group: string): void {
    this.begin(group);
    const current = this.#tries.at(-1)!;
    current.status = 502;
    current.end = current.start;
  }

  /** Whether any try was made. */
  get empty(): boolean {
    return this.#tries.length === 0;
  }

  /**
   * The tries as the access log reads them; a try still open ends now.
   *
   * @returns One entry per try, in order.
   */
  list(): UpstreamTry[] {
    const now = this.#now();
    return this.#tries.map((t) => ({
      addr: t.addr,
      status: t.status,
      responseMs: (t.end ?? now) - t.start,
      connectMs: t.connected === null ? null : t.connected - t.start,
      headerMs: t.header === null ? null : t.header - t.start,
      ...(t.newGroup ? { newGroup: true } : {}),
    }));
  }
}
