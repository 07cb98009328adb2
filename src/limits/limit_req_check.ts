/**
 * The per-request part of `limit_req` (`ngx_http_limit_req_handler`,
 * `_lookup`, `_account`): every `limit_req` of the location in order, the
 * last one accounted at once, the earlier ones accounted when all passed;
 * the longest delay any of them asks for is the request's.
 *
 * @module
 */

import type { RequestVars } from "../engine/mod.ts";
import type { LogLevel } from "../log/mod.ts";
import type { LimitLogLine, LimitReqRule, LimitReqZone } from "./limit_req.ts";

/** A location's `limit_req` settings, merged. */
export interface LimitReqConf {
  /** The rules with their zones, in order (`limit_req` lines of the nearest level that has any). */
  limits: readonly { rule: LimitReqRule; zone: LimitReqZone }[];
  /** `limit_req_log_level` (`error` by default); delays log one level lower. */
  logLevel: "info" | "notice" | "warn" | "error";
  /** `limit_req_status` (503 by default). */
  status: number;
  /** `limit_req_dry_run`. */
  dryRun: boolean;
}

/** `$limit_req_status`. */
export type LimitReqStatus =
  | "PASSED"
  | "DELAYED"
  | "REJECTED"
  | "DELAYED_DRY_RUN"
  | "REJECTED_DRY_RUN";

/** What the check decided. */
export interface LimitReqDecision {
  /** 0 to go on (after `delayMs`), else the status to finalize with. */
  status: number;
  /** How long to hold the request before going on (nginx keeps reading the client meanwhile). */
  delayMs: number;
  /** `$limit_req_status`, or `null` when no limit applied. */
  limitStatus: LimitReqStatus | null;
  /** Lines to log. */
  lines: LimitLogLine[];
}

const NEXT_LEVEL: Record<LimitReqConf["logLevel"], LogLevel> = {
  error: "warn",
  warn: "notice",
  notice: "info",
  info: "info",
};

function excessText(excess: number): string {
  return `${Math.floor(excess / 1000)}.${
    String(excess % 1000).padStart(3, "0")
  }`;
}

/** The excess a state has now: drained by the time since `last`, plus this request. */
function drained(
  zone: LimitReqZone,
  state: { excess: number; last: number },
  now: number,
): { excess: number; ms: number } {
  let ms = now - state.last;
  if (ms < -60000) ms = 1;
  else if (ms < 0) ms = 0;
  const excess = state.excess - Math.trunc(zone.spec.rate * ms / 1000) + 1000;
  return { excess: Math.max(0, excess), ms };
}

/**
 * Runs a location's `limit_req` rules for one request.
 *
 * @param conf The location's settings.
 * @param vars The request, for the zones' keys.
 * @returns The decision.
 *
 * @example Usage
 * ```ts
 * import { checkLimitReq, LimitReqZone, parseLimitReq, parseLimitReqZone } from "./mod.ts";
 * import { constantValue } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * let now = 0;
 * const spec = parseLimitReqZone(constantValue("client"), ["zone=one:1m", "rate=1r/s"]);
 * const rule = parseLimitReq(["zone=one"]);
 * if (!spec.ok || !rule.ok) throw new Error();
 * const zone = new LimitReqZone(spec.value, () => now);
 * const conf = { limits: [{ rule: rule.value, zone }], logLevel: "error" as const, status: 503, dryRun: false };
 * strictEqual(checkLimitReq(conf, {} as never).status, 0);
 * strictEqual(checkLimitReq(conf, {} as never).status, 503);
 * now = 1000;
 * strictEqual(checkLimitReq(conf, {} as never).status, 0);
 * ```
 */
export function checkLimitReq(
  conf: LimitReqConf,
  vars: RequestVars,
): LimitReqDecision {
  const lines: LimitLogLine[] = [];
  const held: { index: number; state: { excess: number; last: number } }[] = [];
  const last = conf.limits.length - 1;
  let outcome: "declined" | "again" | "ok" | "busy" | "error" = "declined";
  let excess = 0;
  let n = 0;
  for (; n <= last; n++) {
    const { rule, zone } = conf.limits[n]!;
    const key = zone.spec.key.evaluate(vars);
    if (key.length === 0) continue;
    if (new TextEncoder().encode(key).length > 65535) {
      lines.push({
        level: "error",
        message:
          `the value of the "${zone.spec.key.text}" key is more than 65535 bytes: "${key}"`,
        withRequest: true,
      });
      continue;
    }
    const now = zone.now();
    const found = zone.lookup(key);
    if (found === null) {
      lines.push({
        level: "alert",
        message:
          `could not allocate node in limit_req zone "${zone.spec.name}"`,
        withRequest: false,
      });
      outcome = "error";
      break;
    }
    const { state, fresh } = found;
    const account = n === last;
    if (fresh) {
      excess = 0;
      if (account) {
        state.last = now;
        outcome = "ok";
        break;
      }
      held.push({ index: n, state });
      outcome = "again";
      continue;
    }
    const d = drained(zone, state, now);
    excess = d.excess;
    if (excess > rule.burst) {
      outcome = "busy";
      break;
    }
    if (account) {
      state.excess = excess;
      if (d.ms !== 0) state.last = now;
      outcome = "ok";
      break;
    }
    held.push({ index: n, state });
    outcome = "again";
  }
  if (outcome === "declined") {
    return { status: 0, delayMs: 0, limitStatus: null, lines };
  }
  if (outcome === "busy" || outcome === "error") {
    if (outcome === "busy") {
      lines.push({
        level: conf.logLevel,
        message: `limiting requests${conf.dryRun ? ", dry run" : ""}, excess: ${
          excessText(excess)
        } by zone "${conf.limits[n]!.zone.spec.name}"`,
        withRequest: true,
      });
    }
    return conf.dryRun
      ? { status: 0, delayMs: 0, limitStatus: "REJECTED_DRY_RUN", lines }
      : { status: conf.status, delayMs: 0, limitStatus: "REJECTED", lines };
  }
  if (outcome === "again") excess = 0;
  // ngx_http_limit_req_account: the earlier limits, now that all passed.
  let limitAt = Math.min(n, last);
  let maxDelay = 0;
  const own = conf.limits[limitAt]!;
  if (excess > own.rule.delay) {
    maxDelay = Math.trunc(
      (excess - own.rule.delay) * 1000 / own.zone.spec.rate,
    );
  }
  for (let h = held.length - 1; h >= 0; h--) {
    const { index, state } = held[h]!;
    const { rule, zone } = conf.limits[index]!;
    const now = zone.now();
    const d = drained(zone, state, now);
    if (d.ms !== 0) state.last = now;
    state.excess = d.excess;
    if (d.excess <= rule.delay) continue;
    const delay = Math.trunc((d.excess - rule.delay) * 1000 / zone.spec.rate);
    if (delay > maxDelay) {
      maxDelay = delay;
      excess = d.excess;
      limitAt = index;
    }
  }
  if (maxDelay === 0) {
    return { status: 0, delayMs: 0, limitStatus: "PASSED", lines };
  }
  lines.push({
    level: NEXT_LEVEL[conf.logLevel],
    message: `delaying request${conf.dryRun ? ", dry run" : ""}, excess: ${
      excessText(excess)
    }, by zone "${conf.limits[limitAt]!.zone.spec.name}"`,
    withRequest: true,
  });
  return conf.dryRun
    ? { status: 0, delayMs: 0, limitStatus: "DELAYED_DRY_RUN", lines }
    : { status: 0, delayMs: maxDelay, limitStatus: "DELAYED", lines };
}
