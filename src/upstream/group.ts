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
import {
  ngxTime,
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

  /**
   * Creates the group.
   *
   * @param name The group name.
   * @param peers The servers with their clients.
   * @param now Clock in milliseconds, for tests.
   */
  constructor(
    name: string,
    peers: { spec: UpstreamServerSpec; client: UpstreamTransport }[],
    now: () => number = Date.now,
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
  }

  /**
   * Chooses the next server for a request, as
   * `ngx_http_upstream_get_round_robin_peer` does: among the primaries, or,
   * once none is left for this request, among the backups (a request that
   * reached the backups stays there).
   *
   * @param tried Servers this request already tried.
   * @returns A server; `none-left` when every server was tried (nginx's
   * tries are spent); `no-live` when some were not tried but none of those
   * is available (nginx's "no live upstreams").
   */
  choose(tried: ReadonlySet<UpstreamPeer>): PeerChoice {
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
    const peer = (onBackups ? null : pickPeer(this.#primaries, tried, now)) ??
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
  );
}
