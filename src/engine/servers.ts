/**
 * Which server answers (`ngx_http_find_virtual_server`): among the servers
 * listening on the address:port the request came in on, the `Host` name
 * (lower case, without port) against `server_name` — exact, then the
 * longest leading wildcard, then the longest trailing wildcard, then regexes
 * in file order — else that address's `default_server`, else its first
 * server. `*.example.com` takes subdomains only, `.example.com` the name
 * itself too (ngx_hash_find_wc_head's `01`/`00` values); a name that
 * conflicts with one an earlier server of the socket holds is ignored, as
 * ngx_hash_add_key's `NGX_BUSY` makes it (`hostname_keys.ts`).
 *
 * @module
 */

import type { ServerConf, SslConf } from "./model.ts";
import type { Listen, ServerName } from "./listen_model.ts";
import { compileRegex } from "./regex.ts";
import {
  addHostnameKey,
  findHostname,
  hostnameTable,
  type HostnameWildcards,
  sortWildcards,
} from "./hostname_keys.ts";

/** The servers of one listening socket, indexed for the name search. */
export interface ListenGroup {
  /** The socket's address (the first, when grouped by port). */
  hostname: string;
  /** Every address of the group. */
  hostnames: readonly string[];
  /** The port. */
  port: number;
  /** `ssl` on any of its `listen`s. */
  ssl: boolean;
  /** `http2` on any of its `listen`s. */
  http2: boolean;
  /**
   * The certificate of a TLS socket: its default server's (nginx's choice
   * for a client that names no server); `null` for plain HTTP or when the
   * default server has none.
   */
  certificate: SslConf | null;
  /** The servers in file order. */
  servers: readonly ServerConf[];
  /** The default server. */
  defaultServer: ServerConf;
  /** Exact names. */
  exact: ReadonlyMap<string, ServerConf>;
  /** Leading and trailing wildcards, longest first. */
  wildcards: HostnameWildcards<ServerConf>;
  /** Regex names in file order. */
  regexes: readonly { regex: RegExp; server: ServerConf }[];
}

/**
 * Reads a `server_name` argument (`ngx_http_server_names`).
 *
 * @param name The argument.
 * @returns The classified name.
 * @throws {import("./complex_value.ts").ValueError} For a bad regex.
 *
 * @example Usage
 * ```ts
 * import { parseServerName } from "./servers.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseServerName("*.example.com"), { kind: "leading", suffix: ".example.com", bare: false });
 * ```
 */
export function parseServerName(name: string): ServerName {
  if (name.startsWith("~")) {
    const text = name.slice(1);
    // Caseless only when the text holds an upper-case letter
    // (ngx_http_core_server_name): on the host nginx lower-cases, a
    // pattern without one matches case-sensitively (`[[:upper:]]`, `\x41`
    // never match).
    const caseless = /[A-Z]/.test(text);
    return { kind: "regex", regex: compileRegex(text, caseless), text };
  }
  const lower = name.toLowerCase();
  if (lower.startsWith("*.")) {
    return { kind: "leading", suffix: lower.slice(1), bare: false };
  }
  if (lower.startsWith(".")) {
    return { kind: "leading", suffix: lower, bare: true };
  }
  if (lower.endsWith(".*")) {
    return { kind: "trailing", prefix: lower.slice(0, -1) };
  }
  return { kind: "exact", name: lower };
}

/** The key of a socket: `127.0.0.1:80`, `[::]:80`. */
export function listenKey(listen: Pick<Listen, "hostname" | "port">): string {
  return listen.hostname.includes(":")
    ? `[${listen.hostname}]:${listen.port}`
    : `${listen.hostname}:${listen.port}`;
}

/**
 * Groups servers by the sockets they listen on, in the order first seen.
 *
 * @param servers The servers in file order.
 * @param by Group by socket (`address:port`, nginx's) or by port alone
 * (when the sockets of one port are bound together).
 * @returns One group per socket or port.
 */
export function groupByListen(
  servers: readonly ServerConf[],
  by: "socket" | "port" = "socket",
): ListenGroup[] {
  const keyOf = (l: Listen) => by === "port" ? String(l.port) : listenKey(l);
  const groups = new Map<
    string,
    { listens: Listen[]; servers: ServerConf[] }
  >();
  for (const server of servers) {
    for (const listen of server.listens) {
      const key = keyOf(listen);
      const group = groups.get(key) ?? { listens: [], servers: [] };
      group.listens.push(listen);
      if (!group.servers.includes(server)) group.servers.push(server);
      groups.set(key, group);
    }
  }
  return [...groups.values()].map(({ listens, servers }) => {
    const first = listens[0]!;
    const defaultServer = servers.find((s) =>
      s.listens.some((l) =>
        l.defaultServer && keyOf(l) === keyOf(first)
      )
    ) ?? servers[0]!;
    const names = hostnameTable<ServerConf>();
    const regexes: { regex: RegExp; server: ServerConf }[] = [];
    for (const server of servers) {
      for (const name of server.names) {
        switch (name.kind) {
          case "exact":
            addHostnameKey(names, name.name, server, false);
            break;
          case "leading":
            addHostnameKey(
              names,
              `${name.bare ? "" : "*"}${name.suffix}`,
              server,
              true,
            );
            break;
          case "trailing":
            addHostnameKey(names, `${name.prefix}*`, server, true);
            break;
          case "regex":
            regexes.push({ regex: name.regex, server });
        }
      }
    }
    sortWildcards(names);
    const ssl = listens.some((l) => l.ssl);
    return {
      hostname: first.hostname,
      hostnames: [...new Set(listens.map((l) => l.hostname))],
      port: first.port,
      ssl,
      http2: listens.some((l) => l.http2),
      certificate: ssl ? defaultServer.ssl ?? null : null,
      servers,
      defaultServer,
      exact: names.exact,
      wildcards: names.wildcards,
      regexes,
    };
  });
}

/**
 * The server for a host name.
 *
 * @param group The socket's servers.
 * @param host The name, lower case, without port; `""` when none was sent.
 * @returns The server and the regex match when a regex name chose it.
 */
export function findServer(
  group: ListenGroup,
  host: string,
): { server: ServerConf; captures: RegExpExecArray | null } {
  // One server answers every name; only a regex name has captures to set.
  if (
    host === "" || (group.servers.length === 1 && group.regexes.length === 0)
  ) {
    return { server: group.defaultServer, captures: null };
  }
  const named = findHostname(group.exact, group.wildcards, host);
  if (named !== undefined) return { server: named, captures: null };
  for (const { regex, server } of group.regexes) {
    const m = regex.exec(host);
    if (m !== null) return { server, captures: m };
  }
  return { server: group.defaultServer, captures: null };
}
