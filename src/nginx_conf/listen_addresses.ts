/**
 * nginx's checks of a `listen` against the ones before it on the same
 * address and port, across the `http` block's servers
 * (ngx_http_add_addresses, ngx_http_add_server): one server listening
 * twice on an address is `a duplicate listen`; two sockets' tuning
 * parameters (`backlog=`, `reuseport`, …) on one address are
 * `duplicate listen options`; two `default_server`s on one address are
 * `a duplicate default server`. Servers sharing an address otherwise is
 * what name-based servers are.
 *
 * @module
 */

import type { Listen } from "../engine/mod.ts";

/** What the `listen`s before have made of one address and port. */
interface Address {
  /** The servers listening on it (their blocks). */
  readonly servers: Set<object>;
  /** A `listen` of it had tuning parameters (nginx's `opt.set`). */
  tuned: boolean;
  /** A `listen` of it was `default_server`. */
  defaultServer: boolean;
}

/** The addresses the servers of one `http` block listen on, so far. */
export class ListenAddresses {
  readonly #seen = new Map<string, Address>();

  /**
   * Adds a server's `listen`, in the file's order.
   *
   * @param listen The socket, its address as nginx reads it.
   * @param server The server's block, which tells servers apart.
   * @param tuned Whether the `listen` has tuning parameters.
   * @returns nginx's `[emerg]` text for it, or `null`.
   *
   * @example Usage
   * ```ts
   * import { ListenAddresses } from "./listen_addresses.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const seen = new ListenAddresses();
   * const listen = { hostname: "127.0.0.1", port: 80, defaultServer: false, ssl: false, http2: false, text: "127.0.0.1:80" };
   * const server = {};
   * strictEqual(seen.add(listen, server, false), null);
   * strictEqual(seen.add(listen, {}, false), null);
   * strictEqual(seen.add(listen, server, false), "a duplicate listen 127.0.0.1:80");
   * ```
   */
  add(listen: Listen, server: object, tuned: boolean): string | null {
    // As nginx prints the socket's address (`addr_text`).
    const host = resolvedIpv4(listen.hostname) ?? listen.hostname;
    const text = host.includes(":")
      ? `[${host}]:${listen.port}`
      : `${host}:${listen.port}`;
    const seen = this.#seen.get(text);
    if (seen === undefined) {
      this.#seen.set(text, {
        servers: new Set([server]),
        tuned,
        defaultServer: listen.defaultServer,
      });
      return null;
    }
    if (seen.servers.has(server)) return `a duplicate listen ${text}`;
    seen.servers.add(server);
    if (tuned) {
      if (seen.tuned) return `duplicate listen options for ${text}`;
      seen.tuned = true;
    }
    if (listen.defaultServer) {
      if (seen.defaultServer) return `a duplicate default server for ${text}`;
      seen.defaultServer = true;
    }
    return null;
  }
}

/**
 * An IPv4 address nginx's `ngx_inet_addr` does not read (fewer than four
 * parts, hex, octal), as getaddrinfo then resolves it (inet_aton: each
 * part decimal, `0`-led octal or `0x` hex, the last filling the bytes
 * left), dotted: `127.1` and `2130706433` are `127.0.0.1`. Four decimal
 * parts are `ngx_inet_addr`'s, read as written (`127.000.000.001`).
 *
 * @param host The `listen` address as written.
 * @returns The dotted address, or `null` when it is not such a number.
 */
function resolvedIpv4(host: string): string | null {
  const parts = host.split(".");
  if (parts.length > 4 || parts.length === 0) return null;
  if (parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p))) {
    return null;
  }
  const values: number[] = [];
  for (const part of parts) {
    if (/^0x[0-9a-f]+$/i.test(part)) values.push(parseInt(part, 16));
    else if (/^0[0-7]*$/.test(part)) values.push(parseInt(part, 8));
    else if (/^[1-9]\d*$/.test(part)) values.push(Number(part));
    else return null;
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 256 ** (4 - values.length)) {
    return null;
  }
  let address = last;
  for (let i = 0; i < values.length; i++) {
    address += values[i]! * 256 ** (3 - i);
  }
  return [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256)
    .join(".");
}
