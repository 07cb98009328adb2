/**
 * nginx's checks of `server_name`s beyond the one name: as the directive
 * reads a name (ngx_http_core_server_name: `*`, `*x`, `.` are invalid, a
 * lone `~` is an empty regex), and as it builds an address's name hash
 * when more than one server listens there (ngx_http_server_names,
 * ngx_hash_add_key: one `*`, only as `*.x` or `x.*`, no `..`; a name an
 * earlier server on the address took is ignored, with a warning).
 *
 * @module
 */

import {
  addHostnameKey,
  hostnameTable,
  type Listen,
  listenKey,
  machineHostname,
} from "../engine/mod.ts";
import type { Directive } from "./parser.ts";

/**
 * What ngx_http_core_server_name refuses in a name as written.
 *
 * @param name The argument.
 * @returns nginx's message, or `null`.
 */
export function serverNameProblem(name: string): string | null {
  if (
    (name[0] === "*" && (name.length < 3 || name[1] !== ".")) ||
    (name[0] === "." && name.length < 2)
  ) {
    return `server name "${name}" is invalid`;
  }
  return name === "~" ? `empty regex in server name "${name}"` : null;
}

/** A server as its addresses' name hashes see it. */
export interface HashedServer {
  /** Its sockets. */
  listens: readonly Listen[];
  /** Its names as nginx hashes them ({@linkcode hashedNames}). */
  names: readonly string[];
}

/**
 * A server's names as nginx keeps them for the hash: each lower case
 * (ngx_http_core_server_name), `$hostname` the machine's name, `""` for a
 * server without `server_name` (ngx_http_core_merge_srv_conf); `""` and
 * `_` are names like any other. Regex names are not hashed.
 *
 * @param server The `server` directive.
 * @returns The names, in the order written.
 */
export function hashedNames(server: Directive): string[] {
  const written = (server.block ?? []).filter((d) => d.name === "server_name")
    .flatMap((d) => d.args);
  if (written.length === 0) return [""];
  return written.filter((name) => !name.startsWith("~")).map((name) =>
    name.toLowerCase() === "$hostname" ? machineHostname() : name.toLowerCase()
  );
}

/**
 * Builds each address's name hash as ngx_http_server_names does, on an
 * address more than one server listens on: a name nginx cannot hash is
 * refused (`a*b`, `www.*.com`, `a..b`), and it stops there; a name an
 * earlier server on the address took (or an earlier name of the same
 * server) is ignored, with nginx's warning. The addresses come in
 * nginx's order (ngx_http_optimize_servers): ports as first seen, on each
 * port a wildcard address last (ngx_http_cmp_conf_addrs).
 *
 * @param servers The servers in file order.
 * @param fail Takes nginx's `[emerg]` message (it names no place).
 * @param warn Takes nginx's `[warn]` message (it names no place).
 */
export function checkNameKeys(
  servers: readonly HashedServer[],
  fail: (message: string) => void,
  warn: (message: string) => void,
): void {
  const byAddress = new Map<string, HashedServer[]>();
  const ports: number[] = [];
  const wildcard = new Set<string>();
  for (const server of servers) {
    for (const listen of server.listens) {
      const address = listenKey(listen);
      if (!ports.includes(listen.port)) ports.push(listen.port);
      if (listen.hostname === "0.0.0.0" || listen.hostname === "::") {
        wildcard.add(address);
      }
      const list = byAddress.get(address) ?? [];
      if (!list.includes(server)) list.push(server);
      byAddress.set(address, list);
    }
  }
  const port = (address: string) =>
    Number(address.slice(address.lastIndexOf(":") + 1));
  const order = [...byAddress.keys()].sort((a, b) =>
    ports.indexOf(port(a)) - ports.indexOf(port(b)) ||
    Number(wildcard.has(a)) - Number(wildcard.has(b))
  );
  for (const address of order) {
    const list = byAddress.get(address)!;
    if (list.length < 2) continue;
    const table = hostnameTable<true>();
    for (const server of list) {
      for (const name of server.names) {
        if (!validKey(name)) {
          fail(`invalid server name or wildcard "${name}" on ${address}`);
          return;
        }
        if (addHostnameKey(table, name, true, true) === "busy") {
          warn(`conflicting server name "${name}" on ${address}, ignored`);
        }
      }
    }
  }
}

/** ngx_hash_add_key()'s NGX_HASH_WILDCARD_KEY check. */
function validKey(key: string): boolean {
  let stars = 0;
  for (let i = 0; i < key.length; i++) {
    if (key[i] === "*" && ++stars > 1) return false;
    if (key[i] === "." && key[i + 1] === ".") return false;
    if (key[i] === "\0") return false;
  }
  if (key.length > 1 && key[0] === ".") return true;
  if (key.length > 2 && (key.startsWith("*.") || key.endsWith(".*"))) {
    return true;
  }
  return stars === 0;
}
