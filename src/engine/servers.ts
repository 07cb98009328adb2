/**
 * Which server answers (`ngx_http_find_virtual_server`): among the servers
 * listening on the address:port the request came in on, the `Host` name
 * (lower case, without port) against `server_name` — exact, then the
 * longest leading wildcard, then the longest trailing wildcard, then regexes
 * in file order — else that address's `default_server`, else its first
 * server.
 *
 * @module
 */

import type { ServerConf, SslConf } from "./model.ts";
import type { Listen, ServerName } from "./listen_model.ts";
import { compileRegex } from "./regex.ts";

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
  /** Leading wildcards (`.example.com` suffixes), longest first. */
  leading: readonly { suffix: string; server: ServerConf }[];
  /** Trailing wildcards (`www.example.` prefixes), longest first. */
  trailing: readonly { prefix: string; server: ServerConf }[];
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
 * deepStrictEqual(parseServerName("*.example.com"), { kind: "leading", suffix: ".example.com" });
 * ```
 */
export function parseServerName(name: string): ServerName {
  if (name.startsWith("~")) {
    const text = name.slice(1);
    return { kind: "regex", regex: compileRegex(text, true), text };
  }
  const lower = name.toLowerCase();
  if (lower.startsWith("*.")) {
    return { kind: "leading", suffix: lower.slice(1) };
  }
  if (lower.startsWith(".")) return { kind: "leading", suffix: lower };
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
    const exact = new Map<string, ServerConf>();
    const leading: { suffix: string; server: ServerConf }[] = [];
    const trailing: { prefix: string; server: ServerConf }[] = [];
    const regexes: { regex: RegExp; server: ServerConf }[] = [];
    for (const server of servers) {
      for (const name of server.names) {
        switch (name.kind) {
          case "exact":
            if (!exact.has(name.name)) {
              exact.set(name.name, server);
            }
            break;
          case "leading":
            leading.push({ suffix: name.suffix, server });
            break;
          case "trailing":
            trailing.push({ prefix: name.prefix, server });
            break;
          case "regex":
            regexes.push({ regex: name.regex, server });
        }
      }
    }
    leading.sort((a, b) => b.suffix.length - a.suffix.length);
    trailing.sort((a, b) => b.prefix.length - a.prefix.length);
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
      exact,
      leading,
      trailing,
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
  const exact = group.exact.get(host);
  if (exact !== undefined) return { server: exact, captures: null };
  for (const { suffix, server } of group.leading) {
    // `.example.com` also matches `example.com` itself.
    if (host.endsWith(suffix) || `.${host}` === suffix) {
      return { server, captures: null };
    }
  }
  for (const { prefix, server } of group.trailing) {
    if (host.startsWith(prefix)) return { server, captures: null };
  }
  for (const { regex, server } of group.regexes) {
    const m = regex.exec(host);
    if (m !== null) return { server, captures: m };
  }
  return { server: group.defaultServer, captures: null };
}
