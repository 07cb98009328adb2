/**
 * nginx's checks of `server_name`s beyond the one name: as the directive
 * reads a name (ngx_http_core_server_name: `*`, `*x`, `.` are invalid, a
 * lone `~` is an empty regex), and as it builds an address's name hash
 * when more than one server listens there (ngx_http_server_names,
 * ngx_hash_add_key: one `*`, only as `*.x` or `x.*`, no `..`).
 *
 * @module
 */

import { listenKey, type ServerConf, type ServerName } from "../engine/mod.ts";

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

/**
 * The names nginx refuses when it hashes an address's names: on an
 * address more than one server listens on, each server's exact and
 * wildcard names (`a*b`, `www.*.com`, `a..b` are refused there).
 *
 * @param servers The compiled servers.
 * @param fail Takes nginx's message (it names no place in the file).
 */
export function checkNameKeys(
  servers: readonly ServerConf[],
  fail: (message: string) => void,
): void {
  const byAddress = new Map<string, ServerConf[]>();
  for (const server of servers) {
    for (const listen of server.listens) {
      const list = byAddress.get(listenKey(listen)) ?? [];
      if (!list.includes(server)) list.push(server);
      byAddress.set(listenKey(listen), list);
    }
  }
  for (const [address, list] of byAddress) {
    if (list.length < 2) continue;
    for (const server of list) {
      for (const name of server.names) {
        const key = hashKey(name);
        if (key !== null && !validKey(key)) {
          fail(`invalid server name or wildcard "${key}" on ${address}`);
        }
      }
    }
  }
}

/** The name as nginx hashes it (lower case), `null` for a regex. */
function hashKey(name: ServerName): string | null {
  switch (name.kind) {
    case "exact":
      return name.name;
    case "leading":
      return `${name.bare ? "" : "*"}${name.suffix}`;
    case "trailing":
      return `${name.prefix}*`;
    case "regex":
      return null;
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
