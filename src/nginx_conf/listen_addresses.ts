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
    const text = listen.hostname.includes(":")
      ? `[${listen.hostname}]:${listen.port}`
      : `${listen.hostname}:${listen.port}`;
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
