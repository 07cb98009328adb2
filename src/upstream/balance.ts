/**
 * The balancing methods of an `upstream{}` group and what a request hands
 * the group to be balanced by (`ip_hash`'s address, `hash`'s key).
 *
 * @module
 */

import { parseClientAddress } from "../access/mod.ts";
import {
  type ConsistentPoints,
  type ConsistentWalk,
  consistentWalk,
  type HashWalk,
  hashWalk,
} from "./hash_choice.ts";
import { type IpHashWalk, ipHashWalk } from "./peer_choice.ts";

/**
 * How a group picks among its primaries: nginx's weighted round-robin,
 * `ip_hash` (by the client's address, round-robin after 20 tries),
 * `least_conn` (fewest open exchanges per weight), `hash KEY` (by the
 * key's CRC-32, round-robin after 20 tries) or `hash KEY consistent`
 * (ketama points).
 */
export type Balance =
  | "round-robin"
  | "ip-hash"
  | "least-conn"
  | "hash"
  | "consistent-hash";

/**
 * A `hash` group's key: its `evaluate` is called with the request's
 * variables (the engine's complex value; the upstream does not read them).
 */
export interface HashKey {
  /** The key for one request. */
  evaluate(vars: object): string;
}

/** What a request hands {@linkcode UpstreamGroup.walkFor}. */
export interface BalanceInput {
  /** The client's address (`ip_hash`). */
  readonly client?: string | undefined;
  /** The evaluated `hash` key. */
  readonly key?: string | undefined;
}

/** A request's state for a hashing method, carried from try to try. */
export type BalanceWalk = IpHashWalk | HashWalk | ConsistentWalk;

/**
 * A request's walk for a method that keeps one, as nginx's
 * `ngx_http_upstream_init_ip_hash_peer`, `…_init_hash_peer` and
 * `…_init_chash_peer` set it up.
 *
 * @param method The group's method.
 * @param input The client's address and the evaluated `hash` key.
 * @param points A `hash … consistent` group's points.
 * @returns The walk; `null` for round-robin and `least_conn` (and for
 * `ip_hash` without a client address).
 */
export function balanceWalk(
  method: Balance,
  input: BalanceInput,
  points: ConsistentPoints | null,
): BalanceWalk | null {
  switch (method) {
    case "ip-hash":
      return input.client === undefined ? null : ipWalk(input.client);
    case "hash":
      return hashWalk(input.key ?? "");
    case "consistent-hash":
      return consistentWalk(points!, input.key ?? "");
    default:
      return null;
  }
}

function ipWalk(client: string): IpHashWalk {
  const address = parseClientAddress(client);
  return ipHashWalk(
    address === null
      ? null
      : address.family === 6
      ? address.bytes
      : Uint8Array.of(
        address.addr >>> 24,
        (address.addr >>> 16) & 0xff,
        (address.addr >>> 8) & 0xff,
        address.addr & 0xff,
      ),
  );
}
