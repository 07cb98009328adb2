/**
 * `limit_req_zone` and `limit_req` (`ngx_http_limit_req_module.c`): nginx's
 * leaky bucket per key. A state keeps `excess` (requests over the rate, in
 * thousandths) and the time it was last updated; each request drains
 * `rate × elapsed` and adds one request. Over `burst` the request is
 * refused; over `delay` (0 unless `delay=` or `nodelay`) it waits until the
 * excess has drained. Zones are bounded as nginx's are: a new key first
 * drops up to two states idle for a minute with nothing left to drain,
 * and a full zone drops its least recently used state.
 *
 * Pure: the clock is injected and the caller does the waiting and logging.
 *
 * @module
 */

import type { ComplexValue } from "../engine/mod.ts";
import type { LogLevel } from "../log/mod.ts";
import { parseZoneParam, slotBytes, usableBytes } from "./zone_size.ts";

/** An error-log line a limit asks for. */
export interface LimitLogLine {
  /** nginx's level. */
  level: LogLevel;
  /** The message. */
  message: string;
  /** `false` for lines nginx writes without the request's fields (zone memory). */
  withRequest: boolean;
}

/** A compiled `limit_req_zone`. */
export interface LimitReqZoneSpec {
  /** The zone's name. */
  name: string;
  /** The key. */
  key: ComplexValue;
  /** The rate in thousandths of a request per second (nginx's `ctx->rate`). */
  rate: number;
  /** The zone's size in bytes. */
  size: number;
}

/** What a directive gave: the value, or nginx's `[emerg]` message. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function atoi(text: string): number | null {
  return /^[0-9]+$/.test(text) ? Number(text) : null;
}

/**
 * Compiles `limit_req_zone key zone=name:size rate=Nr/s`.
 *
 * @param key The key, compiled by the caller.
 * @param params The parameters after the key.
 * @returns The zone, or nginx's message.
 *
 * @example Usage
 * ```ts
 * import { parseLimitReqZone } from "./limit_req.ts";
 * import { constantValue } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const r = parseLimitReqZone(constantValue("k"), ["zone=one:10m", "rate=30r/m"]);
 * strictEqual(r.ok && r.value.rate, 500);
 * ```
 */
export function parseLimitReqZone(
  key: ComplexValue,
  params: readonly string[],
): Parsed<LimitReqZoneSpec> {
  let name: string | null = null;
  let size = 0;
  let rate = 1;
  let scale = 1;
  for (const p of params) {
    if (p.startsWith("zone=")) {
      const zone = parseZoneParam(p);
      if (!zone.ok) return zone;
      name = zone.name;
      size = zone.size;
    } else if (p.startsWith("rate=")) {
      let number = p.slice(5);
      if (number.endsWith("r/s")) number = number.slice(0, -3);
      else if (number.endsWith("r/m")) {
        number = number.slice(0, -3);
        scale = 60;
      }
      const n = atoi(number);
      if (n === null || n <= 0) {
        return { ok: false, error: `invalid rate "${p}"` };
      }
      rate = n;
    } else {
      return { ok: false, error: `invalid parameter "${p}"` };
    }
  }
  if (name === null || name === "") {
    return {
      ok: false,
      error: `"limit_req_zone" must have "zone" parameter`,
    };
  }
  return {
    ok: true,
    value: { name, key, rate: Math.floor(rate * 1000 / scale), size },
  };
}

/** A compiled `limit_req`. */
export interface LimitReqRule {
  /** The zone's name. */
  zone: string;
  /** `burst=`, in thousandths. */
  burst: number;
  /** `delay=` (or `nodelay`: no delay at all), in thousandths. */
  delay: number;
}

/**
 * Compiles `limit_req zone=name [burst=N] [nodelay | delay=N]`.
 *
 * @param params The parameters.
 * @returns The rule, or nginx's message.
 */
export function parseLimitReq(params: readonly string[]): Parsed<LimitReqRule> {
  let zone: string | null = null;
  let burst = 0;
  let delay = 0;
  for (const p of params) {
    if (p.startsWith("zone=")) {
      zone = p.slice(5);
    } else if (p.startsWith("burst=")) {
      const n = atoi(p.slice(6));
      if (n === null || n <= 0) {
        return { ok: false, error: `invalid burst value "${p}"` };
      }
      burst = n;
    } else if (p.startsWith("delay=")) {
      const n = atoi(p.slice(6));
      if (n === null || n <= 0) {
        return { ok: false, error: `invalid delay value "${p}"` };
      }
      delay = n;
    } else if (p === "nodelay") {
      delay = Number.MAX_SAFE_INTEGER / 1000;
    } else {
      return { ok: false, error: `invalid parameter "${p}"` };
    }
  }
  if (zone === null) {
    return { ok: false, error: `"limit_req" must have "zone" parameter` };
  }
  return {
    ok: true,
    value: { zone, burst: burst * 1000, delay: delay * 1000 },
  };
}

interface State {
  excess: number;
  last: number;
  bytes: number;
}

/** A zone's states, bounded by its size. */
export class LimitReqZone {
  readonly spec: LimitReqZoneSpec;
  readonly #now: () => number;
  /** States, least recently used first (nginx's queue, reversed). */
  readonly #states = new Map<string, State>();
  readonly #capacity: number;
  #used = 0;

  /**
   * @param spec The zone.
   * @param now A monotonic clock in ms (nginx's `ngx_current_msec`).
   */
  constructor(
    spec: LimitReqZoneSpec,
    now: () => number = performance.now.bind(performance),
  ) {
    this.spec = spec;
    this.#now = now;
    this.#capacity = usableBytes(spec.size);
  }

  /** States kept. */
  get size(): number {
    return this.#states.size;
  }

  /** The clock, for the handler's delay. */
  now(): number {
    return Math.floor(this.#now());
  }

  /**
   * Finds or makes the state of a key, as `ngx_http_limit_req_lookup`.
   *
   * @returns The state, `null` when the zone has no room.
   * @internal
   */
  lookup(key: string): { state: State; fresh: boolean } | null {
    const state = this.#states.get(key);
    if (state !== undefined) {
      this.#states.delete(key);
      this.#states.set(key, state);
      return { state, fresh: false };
    }
    // rbtree node + ngx_http_limit_req_node_t up to its data, then the key.
    const bytes = slotBytes(80 + new TextEncoder().encode(key).length);
    this.#expire(false);
    if (this.#used + bytes > this.#capacity) {
      this.#expire(true);
      if (this.#used + bytes > this.#capacity) return null;
    }
    const fresh: State = { excess: 0, last: 0, bytes };
    this.#states.set(key, fresh);
    this.#used += bytes;
    return { state: fresh, fresh: true };
  }

  /** `ngx_http_limit_req_expire`: `force` drops the oldest state first. */
  #expire(force: boolean): void {
    const now = this.now();
    let n = force ? 0 : 1;
    while (n < 3) {
      const oldest = this.#states.entries().next();
      if (oldest.done) return;
      const [key, state] = oldest.value;
      if (n++ !== 0) {
        const ms = Math.abs(now - state.last);
        if (ms < 60000) return;
        if (state.excess - this.spec.rate * ms / 1000 > 0) return;
      }
      this.#states.delete(key);
      this.#used -= state.bytes;
    }
  }
}
