/**
 * nginx's `hash KEY` and `hash KEY consistent` peer choices
 * (`ngx_http_upstream_hash_module.c`, nginx 1.22) as pure state and
 * arithmetic over the round-robin state of `peer_choice.ts`, so the same
 * key reaches the same server as under nginx.
 *
 * @module
 */

import { textBytes } from "../runtime/mod.ts";
import { crc32, CRC32_INIT, crc32Update } from "./crc32.ts";
import type { BalancedPeer } from "./least_conn.ts";
import {
  isAvailable,
  markChecked,
  pickPeer,
  weightTurn,
} from "./peer_choice.ts";

const ENCODER = new TextEncoder();

/**
 * One request's walk for `hash KEY` (`ngx_http_upstream_hash_peer_data_t`):
 * the evaluated key's bytes, the hash so far, the rehash count and the
 * tries spent.
 */
export interface HashWalk {
  /** The evaluated key. */
  readonly key: Uint8Array;
  /** The sum of the 15-bit hashes so far. */
  hash: number;
  /** How many hashes were made (the prefix of the next one). */
  rehash: number;
  /** Servers tried by hash; past 20 the choice is round-robin's. */
  tries: number;
}

/**
 * A request's walk for `hash KEY`, as `ngx_http_upstream_init_hash_peer`
 * sets it up.
 *
 * @param key The evaluated key.
 * @returns The walk.
 */
export function hashWalk(key: string): HashWalk {
  return { key: textBytes(key), hash: 0, rehash: 0, tries: 0 };
}

/**
 * Chooses a server by the request's key, as
 * `ngx_http_upstream_get_hash_peer`: `(crc32([REHASH] KEY) >> 16) & 0x7fff`
 * added to the hash so far picks a server by weight among all of them
 * (`down` ones too); one tried, `down` or failed makes it hash again, and
 * past 20 tries, or for an empty key, the choice is round-robin's.
 *
 * @param peers The servers, in configuration order (`hash` keeps no backup).
 * @param tried Servers this request already tried.
 * @param now `ngx_time()`.
 * @param walk The request's walk, updated.
 * @returns The server, or `null` when none is left.
 *
 * @example Usage
 * ```ts
 * import { hashWalk, pickHashPeer } from "./hash_choice.ts";
 * import { roundRobinState } from "./peer_choice.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const peers = ["a", "b", "c"].map((name) => ({
 *   name,
 *   rr: roundRobinState({ maxFails: 1, failTimeoutMs: 10_000 }),
 * }));
 * const first = pickHashPeer(peers, new Set(), 0, hashWalk("/x"))!.name;
 * strictEqual(pickHashPeer(peers, new Set(), 0, hashWalk("/x"))!.name, first);
 * ```
 */
export function pickHashPeer<P extends BalancedPeer>(
  peers: readonly P[],
  tried: ReadonlySet<P>,
  now: number,
  walk: HashWalk,
): P | null {
  if (walk.tries <= 20 && walk.key.length > 0) {
    let total = 0;
    for (const peer of peers) total += peer.rr.weight;
    while (true) {
      let crc = CRC32_INIT;
      if (walk.rehash > 0) {
        crc = crc32Update(crc, ENCODER.encode(String(walk.rehash)));
      }
      crc = (crc32Update(crc, walk.key) ^ 0xffffffff) >>> 0;
      // uint32_t arithmetic, as hp->hash is.
      walk.hash = (walk.hash + ((crc >>> 16) & 0x7fff)) >>> 0;
      walk.rehash++;
      let w = walk.hash % total;
      let i = 0;
      while (w >= peers[i]!.rr.weight) w -= peers[i++]!.rr.weight;
      const peer = peers[i]!;
      const rr = peer.rr;
      if (!tried.has(peer) && isAvailable(rr, now)) {
        markChecked(rr, now);
        return peer;
      }
      if (++walk.tries > 20) break;
    }
  }
  return pickPeer(peers, tried, now);
}

/** The sorted ketama points of a `hash … consistent` group. */
export interface ConsistentPoints {
  /** Each point's hash, ascending, without repeats. */
  readonly hashes: Uint32Array;
  /** The server text of each point (the `server` directive's address). */
  readonly servers: readonly string[];
}

/**
 * The points of a `hash … consistent` group, as
 * `ngx_http_upstream_init_chash`: per server, `160 * weight` points, each
 * `crc32(HOST "\0" PORT PREV_HASH)` (the previous point's hash as four
 * little-endian bytes, 0 at first; `HOST` and `PORT` split at the last `:`
 * followed only by digits), sorted and without repeated hashes.
 *
 * @param servers Each server's address as written and its weight, in order
 * (`down` ones too).
 * @returns The points.
 */
export function consistentPoints(
  servers: readonly { readonly server: string; readonly weight: number }[],
): ConsistentPoints {
  const points: { hash: number; server: string }[] = [];
  const prev = new Uint8Array(4);
  const view = new DataView(prev.buffer);
  for (const { server, weight } of servers) {
    const text = ENCODER.encode(server);
    let host = text;
    let port = text.subarray(text.length);
    if (server.length >= 5 && server.slice(0, 5).toLowerCase() === "unix:") {
      host = text.subarray(5);
    } else {
      for (let j = 0; j < text.length; j++) {
        const c = text[text.length - j - 1]!;
        if (c === 0x3a) {
          host = text.subarray(0, text.length - j - 1);
          port = text.subarray(text.length - j);
          break;
        }
        if (c < 0x30 || c > 0x39) break;
      }
    }
    const base = crc32Update(
      crc32Update(crc32Update(CRC32_INIT, host), Uint8Array.of(0)),
      port,
    );
    view.setUint32(0, 0, true);
    for (let j = 0; j < weight * 160; j++) {
      const hash = (crc32Update(base, prev) ^ 0xffffffff) >>> 0;
      points.push({ hash, server });
      view.setUint32(0, hash, true);
    }
  }
  // Stable, where nginx's qsort is not: of points with one hash (from two
  // servers, about one group in a million) the one kept may differ.
  points.sort((a, b) => a.hash - b.hash);
  const hashes: number[] = [];
  const names: string[] = [];
  for (const p of points) {
    if (hashes.length > 0 && hashes[hashes.length - 1] === p.hash) continue;
    hashes.push(p.hash);
    names.push(p.server);
  }
  return { hashes: Uint32Array.from(hashes), servers: names };
}

/** One request's walk for `hash … consistent`: the point and the tries. */
export interface ConsistentWalk {
  /** The index of the point to try next (taken modulo the point count). */
  hash: number;
  /** Points stepped past; past 20 the choice is round-robin's. */
  tries: number;
  /** The key was empty: round-robin chooses. */
  readonly empty: boolean;
}

/**
 * A request's walk for `hash … consistent`, as
 * `ngx_http_upstream_init_chash_peer`: the first point whose hash is at
 * least the key's CRC-32 (binary search).
 *
 * @param points The group's points.
 * @param key The evaluated key.
 * @returns The walk.
 */
export function consistentWalk(
  points: ConsistentPoints,
  key: string,
): ConsistentWalk {
  const hash = crc32(textBytes(key));
  const hashes = points.hashes;
  let i = 0;
  let j = hashes.length;
  while (i < j) {
    const k = (i + j) >>> 1;
    if (hash > hashes[k]!) i = k + 1;
    else if (hash < hashes[k]!) j = k;
    else return { hash: k, tries: 0, empty: key === "" };
  }
  return { hash: i, tries: 0, empty: key === "" };
}

/**
 * Chooses a server as `ngx_http_upstream_get_chash_peer`: the servers of
 * the current point's address that are untried, not `down` and not failed,
 * by smooth weighted round-robin; none, and the next point is tried; past
 * 20 points, or for an empty key, the choice is round-robin's (nginx 1.22).
 *
 * @param peers The servers with their addresses as written, in order.
 * @param points The group's points.
 * @param options The request's tried servers, `ngx_time()` and walk.
 * @returns The server, or `null` when none is left.
 */
export function pickConsistentPeer<
  P extends BalancedPeer & { readonly server: string },
>(
  peers: readonly P[],
  points: ConsistentPoints,
  options: { tried: ReadonlySet<P>; now: number; walk: ConsistentWalk },
): P | null {
  const { tried, now, walk } = options;
  const count = points.hashes.length;
  if (walk.tries > 20 || walk.empty) return pickPeer(peers, tried, now);
  while (true) {
    const server = points.servers[walk.hash % count]!;
    let best: P | null = null;
    let total = 0;
    for (const peer of peers) {
      const rr = peer.rr;
      if (tried.has(peer) || rr.down || peer.server !== server) continue;
      if (!isAvailable(rr, now)) continue;
      total += weightTurn(rr);
      if (best === null || rr.currentWeight > best.rr.currentWeight) {
        best = peer;
      }
    }
    if (best !== null) {
      best.rr.currentWeight -= total;
      markChecked(best.rr, now);
      return best;
    }
    walk.hash++;
    if (++walk.tries > 20) return pickPeer(peers, tried, now);
  }
}
