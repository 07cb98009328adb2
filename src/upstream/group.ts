/**
 * A group of upstream servers with nginx's failover semantics
 * (`ngx_http_upstream_round_robin.c`, `ngx_http_upstream_next`):
 * smooth weighted round-robin among primaries, `backup` servers only when
 * no primary is left, a server that failed `max_fails` times is skipped until
 * `fail_timeout` has passed since its last failure, and a single-server group
 * is never marked down. Which failures move a request to the next server is decided in
 * {@linkcode shouldTryNext}. The `server` syntax is parsed by
 * `parseUpstreamServer` in `addresses.ts`.
 *
 * @module
 */

import { GcPacer } from "../runtime/mod.ts";
import { UpstreamClient } from "./client.ts";
import type { UpstreamError } from "./error.ts";
import type { TransportFactory, UpstreamTransport } from "./transport.ts";
import type { UpstreamServerSpec } from "./types.ts";
import { parseClientAddress } from "../access/mod.ts";
import {
  type IpHashWalk,
  ipHashWalk,
  ngxTime,
  pickIpHashPeer,
  pickPeer,
  releasePeer,
  type RoundRobinState,
  roundRobinState,
} from "./peer_choice.ts";

/**
 * Whether nginx's default `proxy_next_upstream error timeout` sends a failed
 * request to the next server: only for errors and timeouts, only if the
 * request was never sent or is idempotent (nginx ≥ 1.9.13 does not resend a
 * POST, LOCK or PATCH), and never once the client has been answered (the
 * caller only asks before that).
 *
 * @param error The failure.
 * @param method The request method.
 * @returns Whether to try the next server.
 *
 * @example Usage
 * ```ts
 * import { shouldTryNext } from "./group.ts";
 * import { upstreamErrorFromOs, upstreamTimeout } from "./error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const refused = upstreamErrorFromOs(new Error("(os error 111)"), "connecting to upstream", "linux");
 * strictEqual(shouldTryNext(refused, "POST"), true);
 * strictEqual(shouldTryNext(upstreamTimeout("reading response header from upstream", "linux"), "POST"), false);
 * ```
 */
export function shouldTryNext(error: UpstreamError, method: string): boolean {
  if (error.kind === "client-closed" || error.kind === "invalid-response") {
    return false;
  }
  if (error.action === "connecting to upstream") return true;
  return !["POST", "LOCK", "PATCH"].includes(method);
}

/** A server of the group, with its client and balancing state. */
export interface UpstreamPeer {
  /** The server's settings. */
  spec: UpstreamServerSpec;
  /** Its transport: the connection pool, or a test's fake. */
  client: UpstreamTransport;
  /** nginx's round-robin state: weights, failures and their times. */
  rr: RoundRobinState;
}

/** What the group answers when asked for a server. */
export type PeerChoice =
  | { kind: "peer"; peer: UpstreamPeer }
  | { kind: "none-left" }
  | { kind: "no-live" };

/**
 * How a group picks among its primaries: nginx's weighted round-robin, or
 * `ip_hash` (by the client's address, round-robin after 20 tries).
 */
export type Balance = "round-robin" | "ip-hash";

const NO_LIVE: PeerChoice = { kind: "no-live" };
const NONE_LEFT: PeerChoice = { kind: "none-left" };

/**
 * A group of upstream servers, balanced as nginx's round-robin module does
 * (see `peer_choice.ts`).
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
  #byAddress: boolean;

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
    balance: Balance = "round-robin",
  ) {
    this.name = name;
    const all = peers.map((p) => ({ ...p, rr: roundRobinState(p.spec) }));
    this.#primaries = all.filter((p) => !p.spec.backup);
    this.#backups = all.filter((p) => p.spec.backup);
    this.peers = [...this.#primaries, ...this.#backups];
    this.#now = now;
    // nginx's `peers->single`: one primary and no backup is never marked
    // down and its failures are not counted.
    this.#single = this.#primaries.length === 1 && this.#backups.length === 0;
    this.#byAddress = balance === "ip-hash" && !this.#single;
  }

  /**
   * A request's walk for a group balanced by `ip_hash`
   * (`ngx_http_upstream_init_ip_hash_peer`), to hand to every
   * {@linkcode choose} of that request.
   *
   * @param client The client's address as `Deno.serve` reports it.
   * @returns The walk; `null` for a group balanced round-robin (or of one
   * primary, which nginx serves round-robin).
   */
  walkFor(client: string): IpHashWalk | null {
    if (!this.#byAddress) return null;
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

  /**
   * Chooses the next server for a request, as
   * `ngx_http_upstream_get_round_robin_peer` does: among the primaries, or,
   * once none is left for this request, among the backups (a request that
   * reached the backups stays there).
   *
   * @param tried Servers this request already tried.
   * @param walk The request's `ip_hash` walk ({@linkcode walkFor}), `null`
   * for round-robin.
   * @returns A server; `none-left` when every server was tried (nginx's
   * tries are spent); `no-live` when some were not tried but none of those
   * is available (nginx's "no live upstreams").
   */
  choose(
    tried: ReadonlySet<UpstreamPeer>,
    walk: IpHashWalk | null = null,
  ): PeerChoice {
    if (tried.size === this.peers.length) return NONE_LEFT;
    if (this.#single) {
      // ngx_http_upstream_get_round_robin_peer: a single `down` server is
      // "no live upstreams" too.
      const only = this.#primaries[0]!;
      return only.rr.down ? NO_LIVE : { kind: "peer", peer: only };
    }
    const now = ngxTime(this.#now());
    let onBackups = false;
    if (tried.size > 0) {
      for (const p of tried) if (p.spec.backup) onBackups = true;
    }
    // ip_hash hands over to round-robin after 20 tries
    // (ngx_http_upstream_get_ip_hash_peer), which reaches the backups.
    const hashed = onBackups || walk === null
      ? null
      : pickIpHashPeer(this.#primaries, tried, now, walk);
    const peer = hashed ??
      (onBackups ? null : pickPeer(this.#primaries, tried, now)) ??
      pickPeer(this.#backups, tried, now);
    return peer === null ? NO_LIVE : { kind: "peer", peer };
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
  /** How the primaries are chosen (round-robin by default). */
  balance?: Balance;
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
