/**
 * Every upstream group of a configuration, made once: one
 * {@linkcode UpstreamGroup} per `upstream {}` block and per implicit group
 * of a `proxy_pass host:port` (nginx's `ngx_http_upstream_add` makes one per
 * distinct address), each with its servers' pools, weights, `max_fails`,
 * `fail_timeout`, `backup`, `down` and `keepalive`. Two locations that
 * name the same group share its servers' state, as in nginx.
 *
 * @module
 */

import {
  SERVER_DEFAULTS,
  type UpstreamConf,
  type UpstreamServerConf,
} from "../engine/mod.ts";
import {
  type Balance,
  createUpstreamGroup,
  type HashKey,
  type UpstreamGroup,
  type UpstreamServerSpec,
  type UpstreamTransport,
} from "../upstream/mod.ts";

/** Options for {@linkcode UpstreamRegistry}. */
export interface RegistryOptions {
  /**
   * The timers a connection starts with; each request sets its location's
   * own (`proxy_*_timeout`).
   */
  timeouts?: { connectMs: number; sendMs: number; readMs: number };
  /** Called for every new upstream connection. */
  onConnect?: () => void;
  /** The groups' clock in milliseconds (tests). */
  now?: () => number;
  /** Makes each server's transport instead of the HTTP/1.1 client (tests). */
  transport?: (spec: UpstreamServerSpec) => UpstreamTransport;
}

const DEFAULT_TIMEOUTS = { connectMs: 60_000, sendMs: 60_000, readMs: 60_000 };

/**
 * The most groups of one address (`proxy_pass` with variables) kept for
 * the next request to that address. The addresses a configuration's own
 * values reach are few (its `map` values, its cookies' usual values), but
 * a variable a client sets can name any address: past this many, the one
 * least recently used is let go.
 */
export const DIRECT_GROUPS = 256;

/**
 * The spec of one server of a group, as the upstream client takes it.
 *
 * @param server The server as compiled.
 * @returns The spec.
 *
 * @example Usage
 * ```ts
 * import { serverSpec } from "./upstream_registry.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const spec = serverSpec({
 *   address: "[::1]:80", hostname: "[::1]", port: 80, weight: 1,
 *   maxFails: 1, failTimeoutMs: 10_000, backup: false, down: false,
 * });
 * strictEqual(spec.address.peer, "[::1]:80");
 * strictEqual(spec.address.origin, "http://[::1]");
 * ```
 */
export function serverSpec(server: UpstreamServerConf): UpstreamServerSpec {
  const bare = server.hostname.startsWith("[")
    ? server.hostname.slice(1, -1)
    : server.hostname;
  const host = bare.includes(":") ? `[${bare}]` : bare;
  const port = server.port;
  return {
    address: {
      hostname: bare.toLowerCase(),
      port,
      origin: port === 80 ? `http://${host}` : `http://${host}:${port}`,
      peer: `${host}:${port}`,
    },
    backup: server.backup,
    maxFails: server.maxFails,
    failTimeoutMs: server.failTimeoutMs,
    weight: server.weight,
    down: server.down,
    server: server.server ?? server.address,
  };
}

/** The groups of a configuration by name. */
export class UpstreamRegistry {
  #groups = new Map<string, UpstreamGroup>();
  /** The same groups by lower-case name (names differing in case only are duplicates to nginx). */
  #folded = new Map<string, UpstreamGroup>();
  /** Groups of one address, least recently used first. */
  #direct = new Map<string, UpstreamGroup>();
  #options: RegistryOptions;

  /**
   * Makes every group.
   *
   * @param upstreams `HttpConf.upstreams`.
   * @param options Timers, the connection counter and the test seam.
   */
  constructor(
    upstreams: ReadonlyMap<string, UpstreamConf>,
    options: RegistryOptions = {},
  ) {
    this.#options = options;
    for (const [name, conf] of upstreams) {
      const group = this.#create(
        name,
        conf.servers,
        conf.keepalive,
        conf.hashKey
          ? { method: conf.balance ?? "round-robin", key: conf.hashKey }
          : conf.balance,
      );
      this.#groups.set(name, group);
      this.#folded.set(name.toLowerCase(), group);
    }
  }

  #create(
    name: string,
    servers: readonly UpstreamServerConf[],
    keepalive: number,
    balance: Balance | { method: Balance; key: HashKey } = "round-robin",
  ): UpstreamGroup {
    const options = this.#options;
    return createUpstreamGroup(name, servers.map(serverSpec), {
      balance,
      timeouts: options.timeouts ?? DEFAULT_TIMEOUTS,
      // nginx keeps no idle connection without `keepalive N`.
      upstreamKeepalive: keepalive,
      ...(options.onConnect ? { onConnect: options.onConnect } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  }

  /**
   * The group of one address (`proxy_pass` with variables in its host),
   * made on its first request and shared by the next ones, so a request
   * costs no client of its own (its pool, its timer, its GC pacer): no
   * idle connections kept, and a single server, whose failures nginx does
   * not count (`peers->single`), so no request's state reaches another.
   * At most {@linkcode DIRECT_GROUPS} are kept; one let go is not closed,
   * since requests may still be using it: it keeps no idle connection,
   * and its timer stops with its last request.
   *
   * @param hostname An IPv4 address or `[IPv6]`, as nginx prints it.
   * @param port The port.
   * @returns The group.
   *
   * @example Usage
   * ```ts
   * import { UpstreamRegistry } from "./upstream_registry.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const registry = new UpstreamRegistry(new Map());
   * strictEqual(registry.direct("127.0.0.1", 8080), registry.direct("127.0.0.1", 8080));
   * registry.close();
   * ```
   */
  direct(hostname: string, port: number): UpstreamGroup {
    const address = `${hostname}:${port}`;
    let group = this.#direct.get(address);
    if (group !== undefined) {
      // Most recently used goes last.
      this.#direct.delete(address);
      this.#direct.set(address, group);
      return group;
    }
    group = this.#create(address, [{
      address,
      hostname,
      port,
      ...SERVER_DEFAULTS,
    }], 0);
    if (this.#direct.size >= DIRECT_GROUPS) {
      this.#direct.delete(this.#direct.keys().next().value!);
    }
    this.#direct.set(address, group);
    return group;
  }

  /** How many groups of one address are kept (at most {@linkcode DIRECT_GROUPS}). */
  get directCount(): number {
    return this.#direct.size;
  }

  /**
   * The group of a name, in any case, as `ngx_http_upstream_init_request`
   * finds a name a `proxy_pass` with variables gave (`ngx_strncasecmp`).
   *
   * @param name `ProxyPass.group`, or `host[:port]` from variables.
   * @returns The group, or `undefined` when the configuration has none of
   * that name (the compiler makes one for every `proxy_pass`).
   */
  get(name: string): UpstreamGroup | undefined {
    return this.#groups.get(name) ?? this.#folded.get(name.toLowerCase());
  }

  /** Every group, for the status endpoint. */
  get groups(): IterableIterator<UpstreamGroup> {
    return this.#groups.values();
  }

  /** Closes every group's idle connections. */
  close(): void {
    for (const group of this.#groups.values()) group.close();
    for (const group of this.#direct.values()) group.close();
  }
}
