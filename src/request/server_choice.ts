/**
 * The first stage of the request path: the server a request's name chooses
 * among those of its listening socket (ngx_http_find_virtual_server), and
 * where its lines go before and after that choice. Built once from the
 * compiled configuration; a request's name is read here and nowhere else.
 *
 * @module
 */

import {
  findServer,
  groupByListen,
  type HttpConf,
  type ListenGroup,
  type ServerConf,
} from "../engine/mod.ts";
import { hostNameOf, isValidHost } from "../routing/mod.ts";
import { copyFields, type FieldNames } from "../runtime/mod.ts";
import type { EngineRequest, LogScope } from "./engine_request.ts";

/** The last `Host` asked for and its name: most requests name the same. */
let lastHost: string | null = null;
let lastName = "";

/**
 * `$host`: the `Host` name without port, lower case (ngx_http_validate_host,
 * `hostNameOf`).
 *
 * @param host The `Host` field, or `null`.
 * @returns The name; empty when there is none.
 */
export function hostName(host: string | null): string {
  if (host === null || host === "") return "";
  if (host === lastHost) return lastName;
  lastName = hostNameOf(host);
  lastHost = host;
  return lastName;
}

/**
 * An HTTP/2 request's fields with its `:authority` as `Host`, as nginx
 * makes it (`ngx_http_v2_parse_authority`), so `$http_host` and a folder's
 * redirect see it; other requests' fields as they are (no copy). Whether
 * `Host` was sent is known from the handler's walk of the fields (a `has`
 * was a scan of them per request).
 *
 * @param headers The request's fields.
 * @param request What the handler read of the request.
 * @returns The fields the engine reads.
 */
export function withAuthority(
  headers: Headers,
  request: EngineRequest,
): Headers {
  const host = request.host;
  if (host === null || request.fields.host !== null) return headers;
  const copy = copyFields(headers);
  copy.set("host", host);
  return copy;
}

/**
 * The servers of each listening port, in the order first seen: the sockets
 * of one port are bound together (both loopbacks of `localhost`), so
 * servers that share a port share a name search even when their addresses
 * differ (a named difference from nginx).
 *
 * @param conf The configuration.
 * @returns One group per port; the first is the first server's.
 */
export function listenPorts(conf: HttpConf): ListenGroup[] {
  return groupByListen(conf.servers, "port");
}

/** The servers of every listening socket and their log scopes, made once. */
export class ServerChoice {
  /** The listening sockets' servers, one entry per port (see `listenPorts`). */
  readonly #listens: ListenGroup[];
  /** Each listening port's default server, whose error logs take lines before a server is chosen. */
  readonly #logScopes: readonly LogScope[];
  /** Per socket: whether a server sets `underscores_in_headers` or `ignore_invalid_headers`. */
  readonly #fieldNamesSet: readonly boolean[];

  /** @param conf The compiled configuration. */
  constructor(conf: HttpConf) {
    this.#listens = listenPorts(conf);
    this.#fieldNamesSet = this.#listens.map(({ servers }) =>
      servers.some((s) => s.conf.fieldNames !== undefined)
    );
    this.#logScopes = this.#listens.map(({ defaultServer }) => ({
      location: defaultServer.conf,
      serverName: defaultServer.serverName,
    }));
  }

  /**
   * The servers of a listening socket.
   *
   * @param index The socket's index in `listenPorts`.
   * @returns Its servers; the first socket's for an index out of range.
   */
  listen(index: number): ListenGroup {
    return this.#listens[index] ?? this.#listens[0]!;
  }

  /**
   * Where a request's error lines go before its server is chosen: the
   * default server of its socket (ngx_http_create_request).
   *
   * @param index The socket's index in `listenPorts`.
   * @returns The default server's level and name, made once.
   */
  logScope(index: number): LogScope {
    return this.#logScopes[index] ?? this.#logScopes[0]!;
  }

  /**
   * Which request fields are kept by their names: the
   * `underscores_in_headers` and `ignore_invalid_headers` of the server the
   * request's name chooses. nginx reads them for each field line from the
   * server current when the line is read: the socket's default server's
   * until the request line's or the Host field's name chooses another
   * (ngx_http_process_request_headers). `Deno.serve` does not keep the
   * fields' order; clients send Host first, so every field is read with
   * the chosen server's.
   *
   * @param index The socket's index in `listenPorts`.
   * @param host The request's name (`Host`, or the request line's), `null`
   * when none.
   * @returns The settings; `undefined` at nginx's defaults.
   */
  fieldNames(index: number, host: string | null): FieldNames | undefined {
    // A name search only where a server of the socket sets them.
    if (!(this.#fieldNamesSet[index] ?? this.#fieldNamesSet[0]!)) {
      return undefined;
    }
    return this.#namedServer(index, host).conf.fieldNames;
  }

  /**
   * The server a request's name chooses for the lines about its fields: an
   * invalid name chooses none (ngx_http_validate_host refuses it before
   * the server changes), so the default server's.
   */
  #namedServer(index: number, host: string | null): ServerConf {
    const listen = this.listen(index);
    return host !== null && isValidHost(host)
      ? findServer(listen, hostName(host)).server
      : listen.defaultServer;
  }

  /**
   * Where lines about the request's fields go (a field nginx drops by its
   * name): the server its name chooses, current when nginx reads the
   * fields after Host (ngx_http_process_request_headers).
   *
   * @param index The socket's index in `listenPorts`.
   * @param host The request's name, `null` when none.
   * @returns That server's level and name.
   */
  hostScope(index: number, host: string | null): LogScope {
    return this.scopeOf(index, this.#namedServer(index, host));
  }

  /**
   * Where a server's lines go: the socket's default server's scope, made
   * once, or the server's own.
   *
   * @param index The socket's index in `listenPorts`.
   * @param server A server of that socket.
   * @returns Its level and name.
   */
  scopeOf(index: number, server: ServerConf): LogScope {
    return server === this.listen(index).defaultServer
      ? this.logScope(index)
      : { location: server.conf, serverName: server.serverName };
  }
}
