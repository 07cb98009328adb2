/**
 * nginx's smooth weighted round-robin, as `ngx_http_upstream_get_peer` and
 * `ngx_http_upstream_free_round_robin_peer` (nginx 1.22,
 * `ngx_http_upstream_round_robin.c`) run it: pure state and arithmetic, so
 * a scripted sequence of choices, failures and clock ticks visits servers in
 * nginx's order. Time is whole seconds, like `ngx_time()`, because nginx
 * compares `fail_timeout` against second-resolution timestamps.
 *
 * @module
 */

/** One server's balancing state (`ngx_http_upstream_rr_peer_t`). */
export interface RoundRobinState {
  /** The configured weight. */
  readonly weight: number;
  /** Failures that make the server unavailable; 0 never does. */
  readonly maxFails: number;
  /** `fail_timeout` in seconds (may be fractional). */
  readonly failTimeout: number;
  /** `down`: never chosen. */
  readonly down: boolean;
  /** The running score: the highest is chosen, then lowered by the total. */
  currentWeight: number;
  /** The weight used now: lowered on failure, recovered one per choice. */
  effectiveWeight: number;
  /** Failures counted since the server last passed a check. */
  fails: number;
  /** When the last failure happened (seconds). */
  accessed: number;
  /** When the server was last failed or chosen as a check (seconds). */
  checked: number;
}

/**
 * A fresh state, as `ngx_http_upstream_init_round_robin` sets it up.
 *
 * @param options The server's `weight`, `max_fails` and `fail_timeout`.
 * @returns The state.
 */
export function roundRobinState(
  options: {
    weight?: number;
    maxFails: number;
    failTimeoutMs: number;
    down?: boolean;
  },
): RoundRobinState {
  const weight = options.weight ?? 1;
  return {
    weight,
    maxFails: options.maxFails,
    failTimeout: options.failTimeoutMs / 1000,
    down: options.down ?? false,
    currentWeight: 0,
    effectiveWeight: weight,
    fails: 0,
    accessed: 0,
    checked: 0,
  };
}

/**
 * The clock nginx balances with: `ngx_time()`, whole seconds.
 *
 * @param ms Milliseconds since the epoch.
 * @returns Seconds since the epoch, truncated.
 */
export function ngxTime(ms: number): number {
  return Math.floor(ms / 1000);
}

/**
 * Whether a server may be chosen: not `down`, and not yet `max_fails`
 * failures or the last one more than `fail_timeout` ago.
 *
 * @param rr The server's state.
 * @param now `ngx_time()`.
 * @returns Whether it is available.
 */
export function isAvailable(rr: RoundRobinState, now: number): boolean {
  if (rr.down) return false;
  return rr.maxFails === 0 || rr.fails < rr.maxFails ||
    now - rr.checked > rr.failTimeout;
}

/**
 * Chooses among `peers` (one tier: primaries or backups) the available,
 * untried server with the highest running score, as
 * `ngx_http_upstream_get_peer` does; ties go to the earlier server.
 *
 * @param peers The tier's servers, in configuration order.
 * @param tried Servers this request already tried.
 * @param now `ngx_time()`.
 * @returns The server, or `null` when none is left.
 *
 * @example Usage
 * ```ts
 * import { pickPeer, roundRobinState } from "./peer_choice.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const peers = ["a", "b"].map((name) => ({
 *   name,
 *   rr: roundRobinState({ maxFails: 1, failTimeoutMs: 10_000 }),
 * }));
 * const order = [0, 1, 2].map(() => pickPeer(peers, new Set(), 0)!.name);
 * deepStrictEqual(order, ["a", "b", "a"]);
 * ```
 */
export function pickPeer<P extends { rr: RoundRobinState }>(
  peers: readonly P[],
  tried: ReadonlySet<P>,
  now: number,
): P | null {
  let best: P | null = null;
  let total = 0;
  for (const peer of peers) {
    const rr = peer.rr;
    if (tried.has(peer) || !isAvailable(rr, now)) continue;
    rr.currentWeight += rr.effectiveWeight;
    total += rr.effectiveWeight;
    if (rr.effectiveWeight < rr.weight) rr.effectiveWeight++;
    if (best === null || rr.currentWeight > best.rr.currentWeight) {
      best = peer;
    }
  }
  if (best === null) return null;
  best.rr.currentWeight -= total;
  // Chosen after fail_timeout: this request is the check whose success
  // clears the failures (see releasePeer).
  if (now - best.rr.checked > best.rr.failTimeout) best.rr.checked = now;
  return best;
}

/**
 * Records how an attempt on a server ended, as
 * `ngx_http_upstream_free_round_robin_peer` does for a group of several
 * servers: a failure is counted and lowers the effective weight by
 * `weight / max_fails`; a success clears the failures only when it was the
 * check after `fail_timeout`.
 *
 * @param rr The server's state.
 * @param failed Whether the attempt failed (`NGX_PEER_FAILED`).
 * @param now `ngx_time()`.
 * @returns Whether nginx logs "upstream server temporarily disabled".
 */
export function releasePeer(
  rr: RoundRobinState,
  failed: boolean,
  now: number,
): boolean {
  if (!failed) {
    if (rr.accessed < rr.checked) rr.fails = 0;
    return false;
  }
  rr.fails++;
  rr.accessed = now;
  rr.checked = now;
  if (rr.maxFails === 0) return false;
  rr.effectiveWeight = Math.max(
    0,
    rr.effectiveWeight - Math.trunc(rr.weight / rr.maxFails),
  );
  return rr.fails >= rr.maxFails;
}
