/**
 * `upstream {}` blocks compiled into the engine's groups: each block's
 * servers and their parameters, kept connections and balancing method,
 * and the groups nginx makes for a `proxy_pass` or `fastcgi_pass` address
 * that names no block. Names are compared as nginx compares them.
 *
 * @module
 */

import {
  type ComplexValue,
  SERVER_DEFAULTS,
  type UpstreamConf,
  type UpstreamServerConf,
} from "../engine/mod.ts";
import {
  MAX_CONSISTENT_HASH_WEIGHT,
  MAX_UPSTREAM_KEEPALIVE,
} from "../config/mod.ts";
import { hostAddress } from "../access/mod.ts";
import { parseUpstreamAddress } from "../upstream/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import type { Directive } from "./parser.ts";
import { nginxTimeMs, type Parsed } from "./values.ts";
import { parseSize, tuningProblem } from "./directives_tuning.ts";

/** An `upstream{}` block's balancing method. */
type UpstreamBalance = NonNullable<UpstreamConf["balance"]>;

/** The upstream groups of a configuration, as they are compiled. */
export class Upstreams {
  /** Every group a `proxy_pass` may name, by its key. */
  readonly groups = new Map<string, UpstreamConf>();
  /** The groups a `fastcgi_pass` names, by their key. */
  readonly fastcgiGroups = new Map<string, UpstreamConf>();
  readonly #ctx: CompileContext;
  /**
   * The blocks' `zone`s by name and the size declared (0: none yet), as
   * `ngx_shared_memory_add()` keeps them: blocks may share a zone, one
   * of them giving its size.
   */
  readonly #zones = new Map<string, number>();

  /** @param ctx Where refusals go, the directive check and the value compiler. */
  constructor(ctx: CompileContext) {
    this.#ctx = ctx;
  }

  /**
   * The key of the `upstream{}` block a name means, in any case, as
   * `ngx_http_upstream_add` compares names (`ngx_strncasecmp`); `null` when
   * no block has it.
   *
   * @param name The name as written.
   * @returns The block's key, or `null`.
   */
  named(name: string): string | null {
    if (this.groups.get(name)?.explicit) return name;
    const folded = name.toLowerCase();
    for (const [key, conf] of this.groups) {
      if (conf.explicit && key.toLowerCase() === folded) return key;
    }
    return null;
  }

  /**
   * An `upstream {}` block: its servers, kept connections and balancing
   * method, registered under its name.
   *
   * @param d The `upstream` directive.
   */
  add(d: Directive): void {
    const name = d.args[0]!;
    if (this.named(name) !== null) {
      this.#ctx.fail(d, `duplicate upstream "${name}"`);
      return;
    }
    const servers: UpstreamServerConf[] = [];
    let keepalive = 0;
    let hashed = false;
    // `zone` is ignored (one process keeps the state), so not accepted;
    // its name and size are still nginx's checks.
    for (const entry of d.block ?? []) {
      const { name, args } = entry;
      if (name !== "zone" || args.length < 1 || args.length > 2) continue;
      if (tuningProblem(entry) === null) this.#zone(entry);
    }
    for (const entry of this.#ctx.accepted(d.block ?? [])) {
      if (entry.name === "ip_hash" || entry.name === "hash") hashed = true;
      if (entry.name === "keepalive") {
        keepalive = Number(entry.args[0]);
        if (!Number.isSafeInteger(keepalive) || keepalive < 1) {
          this.#ctx.fail(
            entry,
            `invalid value "${entry.args[0]}" in "keepalive" directive`,
          );
        } else if (keepalive > MAX_UPSTREAM_KEEPALIVE) {
          this.#ctx.fail(
            entry,
            `"keepalive ${
              entry.args[0]
            }" is not supported: the gateway keeps up to ${MAX_UPSTREAM_KEEPALIVE} idle connections (memory is bounded)`,
          );
        }
      } else if (entry.name === "server") {
        const server = this.#upstreamServer(entry);
        // ip_hash and hash keep no backups (their flags lack
        // NGX_HTTP_UPSTREAM_BACKUP); one written before them is kept.
        if (server?.backup && hashed) {
          this.#ctx.fail(
            entry,
            'balancing method does not support parameter "backup"',
          );
        } else if (server) servers.push(server);
      }
    }
    if (servers.length === 0) {
      this.#ctx.fail(d, `no servers are inside upstream`);
      return;
    }
    // Round-robin counts the primary servers, `down` ones too: backups
    // alone are no group (ngx_http_upstream_init_round_robin).
    if (servers.every((s) => s.backup)) {
      this.#ctx.fail(d, `no servers in upstream "${name}"`);
      return;
    }
    const { balance, hashKey } = this.#balanceMethod(d.block ?? []);
    let weight = 0;
    for (const server of servers) weight += server.weight;
    if (
      balance === "consistent-hash" && weight > MAX_CONSISTENT_HASH_WEIGHT
    ) {
      this.#ctx.fail(
        d,
        `"hash ... consistent" with a total weight of ${weight} is not supported: the gateway makes 160 points per weight unit, up to a total weight of ${MAX_CONSISTENT_HASH_WEIGHT} (lower the weights)`,
      );
      return;
    }
    this.groups.set(name, {
      name,
      servers,
      keepalive,
      explicit: true,
      balance,
      ...(hashKey ? { hashKey } : {}),
    });
  }

  /**
   * nginx's check when it starts: a `zone` that no block gave a size is
   * refused (`ngx_init_cycle`, without a place).
   */
  finish(): void {
    for (const [name, size] of this.#zones) {
      if (size === 0) {
        this.#ctx.fail(null, `zero size shared memory zone "${name}"`);
      }
    }
  }

  /** A block's `zone NAME [SIZE]` (its value checked already). */
  #zone(d: Directive): void {
    const name = d.args[0]!;
    const size = d.args[1] === undefined ? 0 : parseSize(d.args[1]) ?? 0;
    const known = this.#zones.get(name) || size;
    this.#zones.set(name, known);
    if (size !== 0 && size !== known) {
      this.#ctx.fail(
        d,
        `the size ${size} of shared memory zone "${name}" conflicts with already declared size ${known}`,
      );
    }
  }

  /**
   * The block's balancing method: the last of `ip_hash`, `least_conn` and
   * `hash KEY [consistent]` (each replaces the one before, as
   * `uscf->peer.init_upstream` is), round-robin when none.
   */
  #balanceMethod(
    block: readonly Directive[],
  ): { balance: UpstreamBalance; hashKey: ComplexValue | null } {
    let balance: UpstreamBalance = "round-robin";
    let hashKey: ComplexValue | null = null;
    for (const x of block) {
      if (x.name === "ip_hash") balance = "ip-hash";
      else if (x.name === "least_conn") balance = "least-conn";
      else if (x.name === "hash") {
        const [key = "", param] = x.args;
        if (param !== undefined && param !== "consistent") {
          // ngx_http_upstream_hash's words.
          this.#ctx.fail(x, `invalid parameter "${param}"`);
          continue;
        }
        balance = param === undefined ? "hash" : "consistent-hash";
        hashKey = this.#ctx.value(x, key);
      }
    }
    const hashed = balance === "hash" || balance === "consistent-hash";
    return { balance, hashKey: hashed ? hashKey : null };
  }

  /** A `server` of an `upstream {}` block with its parameters; `null` when refused. */
  #upstreamServer(d: Directive): UpstreamServerConf | null {
    const [address = "", ...params] = d.args;
    const read = splitHostPort(address);
    if (!read.ok) {
      this.#ctx.fail(d, read.error);
      return null;
    }
    const hostPort = read.value;
    const server: UpstreamServerConf = {
      address: hostPort.port === 80 && !/:\d+$/.test(address)
        ? `${address}:80`
        : address,
      server: address,
      ...hostPort,
      ...SERVER_DEFAULTS,
    };
    for (const param of params) {
      const [key, val = ""] = param.split("=", 2) as [string, string?];
      if (key === "weight" && /^[1-9]\d{0,6}$/.test(val)) {
        server.weight = Number(val);
      } else if (key === "max_fails" && /^\d{1,9}$/.test(val)) {
        server.maxFails = Number(val);
      } else if (key === "fail_timeout" && nginxTimeMs(val) !== null) {
        server.failTimeoutMs = nginxTimeMs(val)!;
      } else if (param === "backup") server.backup = true;
      else if (param === "down") server.down = true;
      else if (key === "max_conns") {
        this.#ctx.fail(
          d,
          `"server … ${param}" is not supported: the gateway does not limit connections per server`,
        );
      } else this.#ctx.fail(d, `invalid parameter "${param}"`);
    }
    return server;
  }
}

/**
 * An upstream address's host and port (80 when none), as nginx reads it
 * (ngx_parse_url); else nginx's refusal, `… in upstream "TEXT"`.
 *
 * @param text The address as written.
 * @param shown The text nginx quotes (a `proxy_pass` URL after `http://`).
 * @returns The host (an address as nginx prints it) and port.
 */
export function splitHostPort(
  text: string,
  shown: string = text,
): Parsed<{ hostname: string; port: number }> {
  // nginx takes `unix:` as a socket's path (ngx_parse_unix_domain_url).
  if (/^unix:/i.test(text)) {
    return {
      ok: false,
      error:
        `"${shown}" is not supported: the gateway reaches back ends over TCP only`,
    };
  }
  const fail = (why: string) => ({
    ok: false as const,
    error: `${why} in upstream "${shown}"`,
  });
  const read = parseUpstreamAddress(text, false);
  if (!read.ok) return fail(read.error);
  const written = read.host;
  // An address as nginx reads it (`127.0.0.010` is 127.0.0.10), kept as
  // nginx prints it: the system's resolver would read it as octal.
  const address = hostAddress(written);
  // Any other name nginx asks the resolver for, which finds none.
  if (address === null && !/^[A-Za-z0-9._-]+$/.test(written)) {
    return fail("host not found");
  }
  const host = (address ?? written).replace(/^\[(.*)\]$/, "$1");
  return {
    ok: true,
    value: {
      hostname: host === "localhost" ? "127.0.0.1" : host,
      port: read.port,
    },
  };
}

/**
 * The group nginx makes for a `proxy_pass` or `fastcgi_pass` address that
 * names no `upstream{}` (ngx_http_upstream_add without a block): one
 * server, nginx's `server` defaults, no kept connections.
 *
 * @param address The address as written, the group's name.
 * @param hostPort Its host and port.
 * @returns The group.
 */
export function implicitGroup(
  address: string,
  hostPort: { hostname: string; port: number },
): UpstreamConf {
  return {
    name: address,
    servers: [{ address, ...hostPort, ...SERVER_DEFAULTS }],
    keepalive: 0,
    explicit: false,
  };
}
