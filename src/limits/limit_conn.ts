/**
 * `limit_conn_zone` and `limit_conn` (`ngx_http_limit_conn_module.c`):
 * requests being processed per key, counted from the preaccess phase to the
 * request's end. A zone is bounded as nginx's: a key that finds no room is
 * refused with `limit_conn_status`, nginx's slab allocator logging
 * `ngx_slab_alloc() failed: no memory`; a key's state goes when its count
 * returns to zero.
 *
 * @module
 */

import type { ComplexValue, RequestVars } from "../engine/mod.ts";
import type { LimitLogLine, Parsed } from "./limit_req.ts";
import { parseZoneParam, slotBytes, usableBytes } from "./zone_size.ts";

/** A compiled `limit_conn_zone`. */
export interface LimitConnZoneSpec {
  /** The zone's name. */
  name: string;
  /** The key. */
  key: ComplexValue;
  /** The zone's size in bytes. */
  size: number;
}

/**
 * Compiles `limit_conn_zone key zone=name:size`.
 *
 * @param key The key, compiled by the caller.
 * @param params The parameters after the key.
 * @returns The zone, or nginx's message.
 */
export function parseLimitConnZone(
  key: ComplexValue,
  params: readonly string[],
): Parsed<LimitConnZoneSpec> {
  let zone: { name: string; size: number } | null = null;
  for (const p of params) {
    if (!p.startsWith("zone=")) {
      return { ok: false, error: `invalid parameter "${p}"` };
    }
    const parsed = parseZoneParam(p);
    if (!parsed.ok) return parsed;
    zone = parsed;
  }
  if (zone === null || zone.name === "") {
    return {
      ok: false,
      error: `"limit_conn_zone" must have "zone" parameter`,
    };
  }
  return { ok: true, value: { name: zone.name, key, size: zone.size } };
}

/**
 * Compiles `limit_conn zone number`.
 *
 * @param zone The zone's name.
 * @param number The most requests per key.
 * @returns The limit, or nginx's message.
 */
export function parseLimitConn(
  zone: string,
  number: string,
): Parsed<{ zone: string; conn: number }> {
  const n = /^[0-9]+$/.test(number) ? Number(number) : 0;
  if (n <= 0) {
    return { ok: false, error: `invalid number of connections "${number}"` };
  }
  if (n > 65535) {
    return { ok: false, error: "connection limit must be less 65536" };
  }
  return { ok: true, value: { zone, conn: n } };
}

/** A zone's counts, bounded by its size. */
export class LimitConnZone {
  readonly spec: LimitConnZoneSpec;
  readonly #counts = new Map<string, { conn: number; bytes: number }>();
  readonly #capacity: number;
  #used = 0;

  /** @param spec The zone. */
  constructor(spec: LimitConnZoneSpec) {
    this.spec = spec;
    this.#capacity = usableBytes(spec.size);
  }

  /** Keys counted now. */
  get size(): number {
    return this.#counts.size;
  }

  /**
   * Counts one more request for a key.
   *
   * @returns `ok`, `limited` at the limit, or `no-memory` when the zone is full.
   * @internal
   */
  acquire(key: string, limit: number): "ok" | "limited" | "no-memory" {
    const state = this.#counts.get(key);
    if (state !== undefined) {
      if (state.conn >= limit) return "limited";
      state.conn++;
      return "ok";
    }
    // rbtree node + ngx_http_limit_conn_node_t up to its data, then the key.
    const bytes = slotBytes(36 + new TextEncoder().encode(key).length);
    if (this.#used + bytes > this.#capacity) return "no-memory";
    this.#counts.set(key, { conn: 1, bytes });
    this.#used += bytes;
    return "ok";
  }

  /**
   * Counts one request less (`ngx_http_limit_conn_cleanup`).
   *
   * @internal
   */
  release(key: string): void {
    const state = this.#counts.get(key);
    if (state === undefined) return;
    if (--state.conn === 0) {
      this.#counts.delete(key);
      this.#used -= state.bytes;
    }
  }
}

/** A location's `limit_conn` settings, merged. */
export interface LimitConnConf {
  /** The limits with their zones, in order. */
  limits: readonly { conn: number; zone: LimitConnZone }[];
  /** `limit_conn_log_level` (`error` by default). */
  logLevel: "info" | "notice" | "warn" | "error";
  /** `limit_conn_status` (503 by default). */
  status: number;
  /** `limit_conn_dry_run`. */
  dryRun: boolean;
}

/** What the check decided. */
export interface LimitConnDecision {
  /** 0 to go on, else the status to finalize with. */
  status: number;
  /** `$limit_conn_status`, or `null` when no limit applied. */
  limitStatus: "PASSED" | "REJECTED" | "REJECTED_DRY_RUN" | null;
  /** Lines to log. */
  lines: LimitLogLine[];
  /** Call once when the request ends (any way it ends): gives back its counts. */
  release(): void;
}

/**
 * Runs a location's `limit_conn` limits for one request.
 *
 * @param conf The location's settings.
 * @param vars The request, for the zones' keys.
 * @returns The decision; its `release` must be called when the request ends.
 *
 * @example Usage
 * ```ts
 * import { checkLimitConn, LimitConnZone, parseLimitConnZone } from "./mod.ts";
 * import { constantValue } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const spec = parseLimitConnZone(constantValue("client"), ["zone=addr:1m"]);
 * if (!spec.ok) throw new Error(spec.error);
 * const conf = { limits: [{ conn: 1, zone: new LimitConnZone(spec.value) }], logLevel: "error" as const, status: 503, dryRun: false };
 * const first = checkLimitConn(conf, {} as never);
 * strictEqual(checkLimitConn(conf, {} as never).status, 503);
 * first.release();
 * strictEqual(checkLimitConn(conf, {} as never).status, 0);
 * ```
 */
export function checkLimitConn(
  conf: LimitConnConf,
  vars: RequestVars,
): LimitConnDecision {
  const lines: LimitLogLine[] = [];
  const held: { zone: LimitConnZone; key: string }[] = [];
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const { zone, key } of held) zone.release(key);
  };
  let limitStatus: LimitConnDecision["limitStatus"] = null;
  for (const { conn, zone } of conf.limits) {
    const key = zone.spec.key.evaluate(vars);
    if (key.length === 0) continue;
    if (new TextEncoder().encode(key).length > 255) {
      lines.push({
        level: "error",
        message:
          `the value of the "${zone.spec.key.text}" key is more than 255 bytes: "${key}"`,
        withRequest: true,
      });
      continue;
    }
    limitStatus = "PASSED";
    const got = zone.acquire(key, conn);
    if (got === "ok") {
      held.push({ zone, key });
      continue;
    }
    if (got === "limited") {
      lines.push({
        level: conf.logLevel,
        message: `limiting connections${
          conf.dryRun ? ", dry run," : ""
        } by zone "${zone.spec.name}"`,
        withRequest: true,
      });
    } else {
      // ngx_slab_alloc_locked's own line; nginx writes it to the zone's log.
      lines.push({
        level: "crit",
        message:
          `ngx_slab_alloc() failed: no memory in limit_conn zone "${zone.spec.name}"`,
        withRequest: false,
      });
    }
    release();
    return conf.dryRun
      ? { status: 0, limitStatus: "REJECTED_DRY_RUN", lines, release }
      : { status: conf.status, limitStatus: "REJECTED", lines, release };
  }
  return { status: 0, limitStatus, lines, release };
}
