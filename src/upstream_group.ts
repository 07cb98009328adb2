/**
 * A group of upstream servers with nginx's failover semantics
 * (`ngx_http_upstream_round_robin.c`, `ngx_http_upstream_next`):
 * round-robin among primaries, `backup` servers only when every primary is
 * unavailable, a server that failed `max_fails` times within `fail_timeout`
 * is skipped for `fail_timeout`, and a single-server group is never marked
 * down. Which failures move a request to the next server is decided in
 * {@linkcode shouldTryNext}. The `server` syntax is parsed by
 * `parseUpstreamServer` in `addresses.ts`.
 *
 * @module
 */

import { GcPacer } from "./gc_pacer.ts";
import type { UpstreamServerSpec } from "./addresses.ts";
import { UpstreamClient } from "./upstream_client.ts";
import type { UpstreamError } from "./upstream_error.ts";

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
 * import { shouldTryNext } from "./upstream_group.ts";
 * import { upstreamErrorFromOs, upstreamTimeout } from "./upstream_error.ts";
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

/** A server of the group, with its client and failure state. */
export interface UpstreamPeer {
  /** The server's settings. */
  spec: UpstreamServerSpec;
  /** Its connection pool. */
  client: UpstreamClient;
  /** Failures counted since `checked`. */
  fails: number;
  /** When the last failure was counted. */
  checked: number;
}

/** What the group answers when asked for a server. */
export type PeerChoice =
  | { kind: "peer"; peer: UpstreamPeer }
  | { kind: "none-left" }
  | { kind: "no-live" };

const BACKUP_LAST = [false, true] as const;
const NO_LIVE: PeerChoice = { kind: "no-live" };
const NONE_LEFT: PeerChoice = { kind: "none-left" };

/** A group of upstream servers. */
export class UpstreamGroup {
  /** The name printed as `http://<name>/…` when no server is available. */
  readonly name: string;
  /** Every server, primaries first. */
  readonly peers: readonly UpstreamPeer[];
  #next = 0;
  #now: () => number;
  #single: boolean;

  /**
   * Creates the group.
   *
   * @param name The group name.
   * @param peers The servers with their clients.
   * @param now Clock, for tests.
   */
  constructor(
    name: string,
    peers: { spec: UpstreamServerSpec; client: UpstreamClient }[],
    now: () => number = Date.now,
  ) {
    this.name = name;
    this.peers = peers.map((p) => ({ ...p, fails: 0, checked: 0 }));
    this.#now = now;
    this.#single = peers.length === 1;
  }

  #available(peer: UpstreamPeer, now: number): boolean {
    if (this.#single || peer.spec.maxFails === 0) return true;
    if (peer.fails < peer.spec.maxFails) return true;
    // After fail_timeout the server is tried again (and its count restarts).
    return now - peer.checked > peer.spec.failTimeoutMs;
  }

  /**
   * Chooses the next server for a request.
   *
   * @param tried Servers this request already tried.
   * @returns A server; `none-left` when all were tried; `no-live` when none
   * was available to begin with.
   */
  choose(tried: ReadonlySet<UpstreamPeer>): PeerChoice {
    const now = this.#now();
    // Counted, then picked, in two passes over the servers: no arrays or
    // closures, since this runs for every proxied request.
    for (const backup of BACKUP_LAST) {
      let live = 0;
      for (const p of this.peers) {
        if (this.#candidate(p, backup, tried, now)) live++;
      }
      if (live === 0) continue;
      let pick = this.#next++ % live;
      for (const peer of this.peers) {
        if (this.#candidate(peer, backup, tried, now) && pick-- === 0) {
          return { kind: "peer", peer };
        }
      }
    }
    return tried.size === 0 ? NO_LIVE : NONE_LEFT;
  }

  #candidate(
    peer: UpstreamPeer,
    backup: boolean,
    tried: ReadonlySet<UpstreamPeer>,
    now: number,
  ): boolean {
    return peer.spec.backup === backup && !tried.has(peer) &&
      this.#available(peer, now);
  }

  /**
   * Counts a failure against a server.
   *
   * @param peer The server.
   * @returns Whether this failure made it unavailable (nginx then logs
   * "upstream server temporarily disabled" at `warn`).
   */
  failed(peer: UpstreamPeer): boolean {
    if (this.#single || peer.spec.maxFails === 0) return false;
    const now = this.#now();
    if (now - peer.checked > peer.spec.failTimeoutMs) peer.fails = 0;
    peer.fails++;
    peer.checked = now;
    return peer.fails === peer.spec.maxFails;
  }

  /**
   * Records a success: the server's failures are forgotten.
   *
   * @param peer The server.
   */
  succeeded(peer: UpstreamPeer): void {
    peer.fails = 0;
  }

  /** Closes every server's idle connections. */
  close(): void {
    for (const p of this.peers) p.client.close();
  }
}

/** Options for {@linkcode createUpstreamGroup}. */
export interface GroupClientOptions {
  /** nginx's upstream timers. */
  timeouts: { connectMs: number; sendMs: number; readMs: number };
  /** Idle connections kept per server. */
  keepalive: number;
  /** nginx's `proxy_buffer_size`: the largest response head. */
  headBufferSize?: number;
  /** Called for every new upstream connection. */
  onConnect?: () => void;
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
      client: new UpstreamClient({
        hostname: spec.address.hostname,
        port: spec.address.port,
        timeouts: options.timeouts,
        maxIdle: options.keepalive,
        gcPacer,
        ...(options.headBufferSize === undefined
          ? {}
          : { headBufferSize: options.headBufferSize }),
        ...(options.onConnect ? { onConnect: options.onConnect } : {}),
      }),
    })),
  );
}
