/**
 * A group of upstream servers with nginx's failover semantics
 * (`ngx_http_upstream_round_robin.c`, `ngx_http_upstream_next`):
 * smooth weighted round-robin among primaries, `backup` servers only when
 * no primary is left, a server that failed `max_fails` times is skipped until
 * `fail_timeout` has passed since its last failure, and a single-server group
 * is never marked down; or, instead of round-robin, nginx's `ip_hash`,
 * `least_conn`, `hash KEY` and `hash KEY consistent` (`balance.ts`). Each
 * server chosen is held (`conns`) until its exchange ends
 * ({@linkcode UpstreamGroup.release}). Which failures move a request to the
 * next server is decided in `try_next.ts`. The `server` syntax is parsed by
 * `parseUpstreamServer` in `addresses.ts`.
 *
 * @module
 */

import { GcPacer } from "../runtime/mod.ts";
import { UpstreamClient } from "./client.ts";
import type { TransportFactory, UpstreamTransport } from "./transport.ts";
import type { UpstreamServerSpec } from "./types.ts";
import {
  type IpHashWalk,
  ngxTime,
  pickIpHashPeer,
  pickPeer,
  releasePeer,
  type RoundRobinState,
  roundRobinState,
} from "./peer_choice.ts";
import {
  type ConsistentPoints,
  consistentPoints,
  type ConsistentWalk,
  type HashWalk,
  pickConsistentPeer,
  pickHashPeer,
} from "./hash_choice.ts";
import { pickLeastConnTier } from "./least_conn.ts";
import {
  type Balance,
  type BalanceInput,
  type BalanceWalk,
  balanceWalk,
  type HashKey,
} from "./balance.ts";

/** A server of the group, with its client and balancing state. */
export interface UpstreamPeer {
  /** The server's settings. */
  spec: UpstreamServerSpec;
  /** Its transport: the connection pool, or a test's fake. */
  client: UpstreamTransport;
  /** nginx's round-robin state: weights, failures and their times. */
  rr: RoundRobinState;
  /** The address as the `server` directive wrote it (`hash … consistent` hashes it). */
  server: string;
}

/** What the group answers when asked for a server. */
export type PeerChoice =
  | { kind: "peer"; peer: UpstreamPeer }
  | { kind: "none-left" }
  | { kind: "no-live" };

const NO_LIVE: PeerChoice = { kind: "no-live" };
const NONE_LEFT: PeerChoice = { kind: "none-left" };

/**
 * A group of upstream servers, balanced as nginx's round-robin module does
 * (`peer_choice.ts`), or by `ip_hash`, `least_conn` (`least_conn.ts`) or
 * `hash` (`hash_choice.ts`).
 */
export class UpstreamGroup {
  /** The name printed as `http://<name>/…` when no server is available. */
  readonly name: string;
  /** Every server, primaries first. */
  readonly peers: readonly UpstreamPeer[];
  #primaries: UpstreamPeer[];
  #backups: UpstreamPeer[];
  #now: () => number;
  #single: boolean;
  #tries: number;
  #method: Balance;
  #points: ConsistentPoints | null = null;
  /**
   * The `hash` key; `null` for the other methods (and for a group of one
   * primary, which nginx serves round-robin).
   */
  readonly hashKey: HashKey | null;
  /** The group keeps a walk per request ({@linkcode walkFor}). */
  readonly walks: boolean;

  /**
   * Creates the group.
   *
   * @param name The group name.
   * @param peers The servers with their clients.
   * @param now Clock in milliseconds, for tests.
   * @param balance How the primaries are chosen.
   */
  constructor(
    name: string,
    peers: { spec: UpstreamServerSpec; client: UpstreamTransport }[],
    now: () => number = Date.now,
    balance: Balance | { method: Balance; key?: HashKey } = "round-robin",
  ) {
    this.name = name;
    const all = peers.map((p) => ({
      ...p,
      rr: roundRobinState(p.spec),
      server: p.spec.server ?? p.spec.address.peer,
    }));
    this.#primaries = all.filter((p) => !p.spec.backup);
    this.#backups = all.filter((p) => p.spec.backup);
    this.peers = [...this.#primaries, ...this.#backups];
    this.#now = now;
    // nginx's `peers->single`: one primary and no backup is never marked
    // down and its failures are not counted.
    this.#single = this.#primaries.length === 1 && this.#backups.length === 0;
    // nginx's tries: the servers that are not `down`
    // (`ngx_http_upstream_tries`).
    this.#tries = all.filter((p) => !p.rr.down).length;
    const method = typeof balance === "string" ? balance : balance.method;
    // least_conn and hash of one primary are round-robin's
    // (`peers->single`); consistent hash is too in effect: one server.
    this.#method = this.#single ? "round-robin" : method;
    this.walks = this.#method === "ip-hash" || this.#method === "hash" ||
      this.#method === "consistent-hash";
    this.hashKey = this.walks && typeof balance !== "string"
      ? balance.key ?? null
      : null;
    if (this.#method === "consistent-hash") {
      this.#points = consistentPoints(
        this.#primaries.map((p) => ({ server: p.server, weight: p.rr.weight })),
      );
    }
  }

  /**
   * A request's walk for a group balanced by `ip_hash`
   * (`ngx_http_upstream_init_ip_hash_peer`) or `hash`
   * (`ngx_http_upstream_init_hash_peer`, `…_init_chash_peer`), to hand to
   * every {@linkcode choose} of that request.
   *
   * @param input The client's address, and the evaluated `hash` key.
   * @returns The walk; `null` for the other methods.
   */
  walkFor(input: BalanceInput): BalanceWalk | null {
    return balanceWalk(this.#method, input, this.#points);
  }

  /**
   * nginx's tries for one request: the servers that are not `down`,
   * backups included (`ngx_http_upstream_tries`).
   */
  get tries(): number {
    return this.#tries;
  }

  /**
   * Chooses the next server for a request, as
   * `ngx_http_upstream_get_round_robin_peer` does: among the primaries, or,
   * once none is left for this request, among the backups (a request that
   * reached the backups stays there).
   *
   * @param tried Servers this request already tried.
   * @param walk The request's walk ({@linkcode walkFor}), `null` for the
   * methods that keep none.
   * @returns A server; `none-left` when every server was tried (nginx's
   * tries are spent); `no-live` when some were not tried but none of those
   * is available (nginx's "no live upstreams").
   */
  choose(
    tried: ReadonlySet<UpstreamPeer>,
    walk: BalanceWalk | null = null,
  ): PeerChoice {
    const peer = this.#pick(tried, walk);
    if (peer === null) {
      // Every try spent: the request ends with its last failure
      // (ngx_http_upstream_next on `u->peer.tries == 0`).
      return tried.size > 0 && tried.size >= this.#tries ? NONE_LEFT : NO_LIVE;
    }
    // Held until the exchange ends ({@linkcode release}), as nginx's
    // `peer->conns`.
    peer.rr.conns++;
    return { kind: "peer", peer };
  }

  #pick(
    tried: ReadonlySet<UpstreamPeer>,
    walk: BalanceWalk | null,
  ): UpstreamPeer | null {
    if (tried.size === this.peers.length) return null;
    if (this.#single) {
      // ngx_http_upstream_get_round_robin_peer: a single `down` server is
      // "no live upstreams" too.
      const only = this.#primaries[0]!;
      return only.rr.down ? null : only;
    }
    const now = ngxTime(this.#now());
    let onBackups = false;
    if (tried.size > 0) {
      for (const p of tried) if (p.spec.backup) onBackups = true;
    }
    switch (this.#method) {
      case "least-conn":
        return pickLeastConnTier(
          { primaries: this.#primaries, backups: this.#backups },
          tried,
          now,
          onBackups,
        );
      case "hash":
        return pickHashPeer(this.#primaries, tried, now, walk as HashWalk);
      case "consistent-hash":
        return pickConsistentPeer(this.#primaries, this.#points!, {
          tried,
          now,
          walk: walk as ConsistentWalk,
        });
    }
    // ip_hash hands over to round-robin after 20 tries
    // (ngx_http_upstream_get_ip_hash_peer), which reaches the backups.
    const hashed = onBackups || walk === null
      ? null
      : pickIpHashPeer(this.#primaries, tried, now, walk as IpHashWalk);
    return hashed ??
      (onBackups ? null : pickPeer(this.#primaries, tried, now)) ??
      pickPeer(this.#backups, tried, now);
  }

  /**
   * Frees a server chosen by {@linkcode choose} once its exchange is over
   * (`peer->conns--` in `ngx_http_upstream_free_round_robin_peer`): called
   * once per choice, by the walk on a failed attempt and by the exchange's
   * end otherwise.
   *
   * @param peer The server.
   */
  release(peer: UpstreamPeer): void {
    peer.rr.conns--;
  }

  /**
   * Records a failed attempt (`NGX_PEER_FAILED`).
   *
   * @param peer The server.
   * @returns Whether nginx logs "upstream server temporarily disabled" now.
   */
  failed(peer: UpstreamPeer): boolean {
    if (this.#single) return false;
    return releasePeer(peer.rr, true, ngxTime(this.#now()));
  }

  /**
   * Records an attempt that ended without the server failing (an answer, or
   * a client that left): a check after `fail_timeout` clears its failures.
   *
   * @param peer The server.
   */
  succeeded(peer: UpstreamPeer): void {
    if (!this.#single) releasePeer(peer.rr, false, ngxTime(this.#now()));
  }

  /** Closes every server's idle connections. */
  close(): void {
    for (const p of this.peers) p.client.close();
  }
}

/**
 * Options for {@linkcode createUpstreamGroup}: the settings under the
 * gateway configuration's names (documented there), and the seams.
 */
export interface GroupClientOptions {
  /** The upstream timers. */
  timeouts: { connectMs: number; sendMs: number; readMs: number };
  /** Idle connections kept per server. */
  upstreamKeepalive: number;
  /** The largest response head, in bytes. */
  proxyBufferSize?: number;
  /** Called for every new upstream connection. */
  onConnect?: () => void;
  /**
   * Makes each server's transport instead of the HTTP/1.1 client: the seam
   * in-process tests of the handler use.
   */
  transport?: TransportFactory;
  /** The clock failures and idle connections are timed by, in milliseconds (tests). */
  now?: () => number;
  /** How the primaries are chosen (round-robin by default), and a `hash` key. */
  balance?: Balance | { method: Balance; key?: HashKey };
}

/**
 * Builds a group with one connection pool per server.
 *
 * @param name The group name.
 * @param specs The servers, in order.
 * @param options Pool and timer settings shared by all servers.
 * @returns The group.
 */
export function createUpstreamGroup(
  name: string,
  specs: UpstreamServerSpec[],
  options: GroupClientOptions,
): UpstreamGroup {
  // One pacer for all: the garbage it counts is the process's.
  const gcPacer = new GcPacer();
  return new UpstreamGroup(
    name,
    specs.map((spec) => ({
      spec,
      client: options.transport?.(spec) ?? new UpstreamClient({
        hostname: spec.address.hostname,
        port: spec.address.port,
        timeouts: options.timeouts,
        maxIdle: options.upstreamKeepalive,
        gcPacer,
        ...(options.proxyBufferSize === undefined
          ? {}
          : { headBufferSize: options.proxyBufferSize }),
        ...(options.onConnect ? { onConnect: options.onConnect } : {}),
        ...(options.now ? { now: options.now } : {}),
      }),
    })),
    options.now,
    options.balance,
  );
}
