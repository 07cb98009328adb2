/**
 * A `proxy_pass` URL with variables in its host, evaluated per request
 * (`ngx_http_proxy_eval`): its parts as `ngx_parse_url` reads them, then the
 * group they name as `ngx_http_upstream_init_request` finds it: an
 * `upstream{}` of that name (or the implicit group of that `host:port`),
 * else a direct connection to an address, else nothing, since the gateway
 * resolves no names per request (nginx without `resolver`).
 *
 * @module
 */

import { hostAddress } from "../access/mod.ts";
import {
  type ParsedAddress,
  parseUpstreamAddress,
  type UpstreamGroup,
} from "../upstream/mod.ts";
import type { UpstreamRegistry } from "./upstream_registry.ts";

/**
 * An evaluated URL's parts as the one address reader gives them (its URI
 * part a query made `/?q`), or nginx's error line for it.
 */
export type ProxyUrl =
  | Extract<ParsedAddress, { ok: true }>
  | { ok: false; message: string };

/**
 * Reads an evaluated `proxy_pass` value as `ngx_http_proxy_eval` and
 * `ngx_parse_url` do (`uri_part`, no resolving).
 *
 * @param url The value.
 * @returns The parts, or nginx's error message (the request gets 500).
 *
 * @example Usage
 * ```ts
 * import { parseProxyUrl } from "./proxy_url.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseProxyUrl("http://10.0.0.5:8080?x=1"), {
 *   ok: true, host: "10.0.0.5", port: 8080, noPort: false, uri: "/?x=1",
 * });
 * deepStrictEqual(parseProxyUrl("http://"), {
 *   ok: false, message: 'invalid URL prefix in "http://"',
 * });
 * ```
 */
export function parseProxyUrl(url: string): ProxyUrl {
  // `https://` is refused when the file is read; a value that becomes one
  // is not forwarded either.
  if (url.length <= 7 || url.slice(0, 7).toLowerCase() !== "http://") {
    return { ok: false, message: `invalid URL prefix in "${url}"` };
  }
  const rest = url.slice(7);
  const read = parseUpstreamAddress(rest, true);
  if (!read.ok) {
    return { ok: false, message: `${read.error} in upstream "${rest}"` };
  }
  const { host, port, noPort, uri } = read;
  return {
    ok: true,
    host,
    port,
    noPort,
    uri: uri.startsWith("?") ? `/${uri}` : uri,
  };
}

/**
 * The group an evaluated URL names: an `upstream{}` (a URL without a port),
 * the implicit group of its `host:port`, or, for an address, the group of
 * that one server (nginx's `ngx_http_upstream_create_round_robin_peer`),
 * shared by the requests to it (`UpstreamRegistry.direct`).
 *
 * @param url The parts.
 * @param registry The configuration's groups.
 * @returns The group, or nginx's error line (the request gets 502).
 */
export function groupOf(
  url: Extract<ProxyUrl, { ok: true }>,
  registry: UpstreamRegistry,
): { group: UpstreamGroup } | { message: string } {
  const named = (url.noPort ? registry.get(url.host) : undefined) ??
    registry.get(`${url.host}:${url.port}`);
  if (named !== undefined) return { group: named };
  // ngx_parse_url took an address (ngx_inet_addr, ngx_inet6_addr): its
  // sockaddr is connected to, named as ngx_sock_ntop prints it.
  const address = hostAddress(url.host);
  if (address !== null) return { group: registry.direct(address, url.port) };
  return { message: `no resolver defined to resolve ${url.host}` };
}
