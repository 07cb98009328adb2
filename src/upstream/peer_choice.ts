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
  /**
   * Exchanges open with the server (`conns`): counted from its choice
   * until nginx frees the peer (`least_conn` chooses by it).
   */
  conns: number;
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
    conns: 0,
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
    total += weightTurn(rr);
    if (best === null || rr.currentWeight > best.rr.currentWeight) {
      best = peer;
    }
  }
  if (best === null) return null;
  best.rr.currentWeight -= total;
  markChecked(best.rr, now);
  return best;
}

/**
 * One server's turn in nginx's smooth weighted round-robin
 * (`ngx_http_upstream_get_peer`): its running score raised by its
 * effective weight, which then recovers by one toward its weight. The
 * server with the highest score after every turn is chosen, and its score
 * lowered by the sum of the turns. Every balancing method that breaks a
 * tie by weight takes its turns here (round-robin, `least_conn`,
 * `hash … consistent`).
 *
 * @param rr The server's state, changed.
 * @returns The effective weight the turn added.
 *
 * @example Usage
 * ```ts
 * import { roundRobinState, weightTurn } from "./peer_choice.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const rr = roundRobinState({ weight: 3, maxFails: 1, failTimeoutMs: 10_000 });
 * strictEqual(weightTurn(rr), 3);
 * strictEqual(rr.currentWeight, 3);
 * ```
 */
export function weightTurn(rr: RoundRobinState): number {
  const added = rr.effectiveWeight;
  rr.currentWeight += added;
  if (added < rr.weight) rr.effectiveWeight++;
  return added;
}

/**
 * A server just chosen, by any method: chosen after `fail_timeout`, this
 * request is the check whose success clears its failures (see
 * {@linkcode releasePeer}).
 *
 * @param rr The server's state, changed.
 * @param now `ngx_time()`.
 */
export function markChecked(rr: RoundRobinState, now: number): void {
  if (now - rr.checked > rr.failTimeout) rr.checked = now;
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

/**
 * One request's walk for `ip_hash` (`ngx_http_upstream_ip_hash_peer_data_t`):
 * the bytes of the client's address it hashes, the hash so far, and the
 * tries spent.
 */
export interface IpHashWalk {
  /** The first three bytes of an IPv4 address, all 16 of an IPv6 one. */
  readonly addr: Uint8Array;
  /** The hash, carried from one choice to the next (starts at 89). */
  hash: number;
  /** Servers tried by hash; past 20 the choice is round-robin's. */
  tries: number;
}

/** nginx's stand-in for an address of another family (`ngx_http_upstream_ip_hash_pseudo_addr`). */
const PSEUDO_ADDR = new Uint8Array(3);

/**
 * A request's `ip_hash` walk, as `ngx_http_upstream_init_ip_hash_peer` sets
 * it up: IPv4 clients of one /24 hash alike; an IPv6 client (an
 * IPv4-mapped one too) by its whole address.
 *
 * @param addr The client's address: its four or sixteen bytes, or `null`
 * for one of neither family.
 * @returns The walk.
 */
export function ipHashWalk(addr: Uint8Array | null): IpHashWalk {
  const bytes = addr === null
    ? PSEUDO_ADDR
    : addr.length === 4
    ? addr.subarray(0, 3)
    : addr;
  return { addr: bytes, hash: 89, tries: 0 };
}

/**
 * Chooses a primary server by the client's address, as
 * `ngx_http_upstream_get_ip_hash_peer` does: the hash picks a server by
 * weight among all primaries (`down` ones too); one already tried, `down`
 * or failed makes the hash go on, and after 20 such tries the choice falls
 * to round-robin ({@linkcode pickPeer}, which then reaches the backups).
 *
 * @param peers The primaries, in configuration order.
 * @param tried Servers this request already tried.
 * @param now `ngx_time()`.
 * @param walk The request's walk, updated.
 * @returns The server, or `null` when round-robin chooses.
 *
 * @example Usage
 * ```ts
 * import { ipHashWalk, pickIpHashPeer, roundRobinState } from "./peer_choice.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const peers = ["a", "b", "c"].map((name) => ({
 *   name,
 *   rr: roundRobinState({ maxFails: 1, failTimeoutMs: 10_000 }),
 * }));
 * const client = Uint8Array.of(127, 0, 0, 1);
 * const first = pickIpHashPeer(peers, new Set(), 0, ipHashWalk(client))!.name;
 * strictEqual(pickIpHashPeer(peers, new Set(), 0, ipHashWalk(client))!.name, first);
 * ```
 */
export function pickIpHashPeer<P extends { rr: RoundRobinState }>(
  peers: readonly P[],
  tried: ReadonlySet<P>,
  now: number,
  walk: IpHashWalk,
): P | null {
  if (walk.tries > 20) return null;
  let total = 0;
  for (const peer of peers) total += peer.rr.weight;
  let hash = walk.hash;
  while (true) {
    for (const b of walk.addr) hash = (hash * 113 + b) % 6271;
    let w = hash % total;
    let i = 0;
    while (w >= peers[i]!.rr.weight) w -= peers[i++]!.rr.weight;
    const peer = peers[i]!;
    const rr = peer.rr;
    if (!tried.has(peer) && isAvailable(rr, now)) {
      markChecked(rr, now);
      walk.hash = hash;
      return peer;
    }
    if (++walk.tries > 20) return null;
  }
}
