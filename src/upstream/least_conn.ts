/**
 * nginx's `least_conn` peer choice (`ngx_http_upstream_get_least_conn_peer`,
 * nginx 1.22) as pure state and arithmetic over the round-robin state of
 * `peer_choice.ts`: the fewest open exchanges per weight, ties by smooth
 * weighted round-robin, the backups when no primary is left.
 *
 * @module
 */

import {
  isAvailable,
  markChecked,
  type RoundRobinState,
  weightTurn,
} from "./peer_choice.ts";

/** A server as `least_conn` and the hash methods see it. */
export interface BalancedPeer {
  /** Its round-robin state, with its open exchanges (`conns`). */
  readonly rr: RoundRobinState;
}

/**
 * Chooses among one tier (primaries or backups) as
 * `ngx_http_upstream_get_least_conn_peer`: the available, untried server
 * with the fewest open exchanges per weight (`conns * w < w * conns`, no
 * division); among several tied, smooth weighted round-robin from the first
 * of them.
 *
 * @param peers The tier's servers, in configuration order.
 * @param tried Servers this request already tried.
 * @param now `ngx_time()`.
 * @returns The server, or `null` when none is left.
 *
 * @example Usage
 * ```ts
 * import { pickLeastConnPeer } from "./least_conn.ts";
 * import { roundRobinState } from "./peer_choice.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const peers = ["a", "b"].map((name) => ({
 *   name,
 *   rr: roundRobinState({ maxFails: 1, failTimeoutMs: 10_000 }),
 * }));
 * peers[0]!.rr.conns = 1;
 * strictEqual(pickLeastConnPeer(peers, new Set(), 0)!.name, "b");
 * ```
 */
export function pickLeastConnPeer<P extends BalancedPeer>(
  peers: readonly P[],
  tried: ReadonlySet<P>,
  now: number,
): P | null {
  let best: P | null = null;
  let first = 0;
  let many = false;
  for (let i = 0; i < peers.length; i++) {
    const peer = peers[i]!;
    if (tried.has(peer) || !isAvailable(peer.rr, now)) continue;
    if (best === null) {
      best = peer;
      first = i;
      many = false;
      continue;
    }
    const mine = peer.rr.conns * best.rr.weight;
    const theirs = best.rr.conns * peer.rr.weight;
    if (mine < theirs) {
      best = peer;
      first = i;
      many = false;
    } else if (mine === theirs) many = true;
  }
  if (best === null) return null;
  if (many) {
    let total = 0;
    for (let i = first; i < peers.length; i++) {
      const peer = peers[i]!;
      const rr = peer.rr;
      if (tried.has(peer) || rr.down) continue;
      // Compared with the best so far, as nginx does: the tied share one
      // ratio, so any of them answers alike.
      if (rr.conns * best.rr.weight !== best.rr.conns * rr.weight) continue;
      if (!isAvailable(rr, now)) continue;
      total += weightTurn(rr);
      if (rr.currentWeight > best.rr.currentWeight) best = peer;
    }
    best.rr.currentWeight -= total;
  }
  markChecked(best.rr, now);
  return best;
}

/**
 * The whole choice of `ngx_http_upstream_get_least_conn_peer`: the
 * primaries, then the backups (a request on the backups stays there).
 * nginx 1.22 forgets no failure when none is left (later versions mark
 * them all live again).
 *
 * @param tiers The primaries and the backups, in configuration order.
 * @param tried Servers this request already tried.
 * @param now `ngx_time()`.
 * @param onBackups The request has reached the backups.
 * @returns The server, or `null` when none is left.
 */
export function pickLeastConnTier<P extends BalancedPeer>(
  tiers: { readonly primaries: readonly P[]; readonly backups: readonly P[] },
  tried: ReadonlySet<P>,
  now: number,
  onBackups: boolean,
): P | null {
  const { primaries, backups } = tiers;
  return (onBackups ? null : pickLeastConnPeer(primaries, tried, now)) ??
    pickLeastConnPeer(backups, tried, now);
}
