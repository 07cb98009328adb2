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

import type { UpstreamGroup } from "../upstream/mod.ts";
import type { UpstreamRegistry } from "./upstream_registry.ts";

/** An evaluated URL's parts, or nginx's error line and status for it. */
export type ProxyUrl =
  | {
    ok: true;
    /** The host as written: a name, an IPv4 address, `[IPv6]`. */
    host: string;
    /** The port, 80 when none is written. */
    port: number;
    /** No port was written. */
    noPort: boolean;
    /** The URI part (`/x`, a query made `/?q`), empty when none. */
    uri: string;
  }
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
  const fail = (err: string) =>
    ({ ok: false, message: `${err} in upstream "${rest}"` }) as const;
  let hostEnd: number;
  let afterHost: number;
  if (rest.startsWith("[")) {
    // ngx_parse_inet6_url: the brackets belong to the host.
    const close = rest.indexOf("]");
    if (close < 0) return fail("invalid host");
    hostEnd = close + 1;
    afterHost = hostEnd;
  } else {
    const slash = rest.indexOf("/");
    const query = rest.indexOf("?");
    const uriAt = slash < 0
      ? query
      : query < 0
      ? slash
      : Math.min(slash, query);
    const end = uriAt < 0 ? rest.length : uriAt;
    // The first `:` starts the port (ngx_parse_inet_url's ngx_strlchr).
    const colon = rest.indexOf(":");
    hostEnd = colon < 0 || colon > end ? end : colon;
    afterHost = hostEnd;
  }
  const host = rest.slice(0, hostEnd);
  let uriAt = rest.length;
  for (const c of ["/", "?"]) {
    const at = rest.indexOf(c, afterHost);
    if (at >= 0 && at < uriAt) uriAt = at;
  }
  const portText = rest.slice(afterHost, uriAt);
  let port = 80;
  let noPort = true;
  if (portText !== "") {
    // ngx_atoi: digits only, 1-65535.
    const digits = portText.slice(1);
    const n = /^\d{1,5}$/.test(digits) ? Number(digits) : -1;
    if (!portText.startsWith(":") || n < 1 || n > 65535) {
      return fail("invalid port");
    }
    port = n;
    noPort = false;
  }
  if (host === "") return fail("no host");
  const uri = rest.slice(uriAt);
  return {
    ok: true,
    host,
    port,
    noPort,
    uri: uri.startsWith("?") ? `/${uri}` : uri,
  };
}

/** A dotted IPv4 address as `ngx_inet_addr` takes it, or `[IPv6]`. */
const ADDRESS =
  /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$|^\[[0-9a-f:.]+\]$/i;

/**
 * The group an evaluated URL names: an `upstream{}` (a URL without a port),
 * the implicit group of its `host:port`, or, for an address, a group of
 * that one server made for this request (nginx's
 * `ngx_http_upstream_create_round_robin_peer`; kept nowhere, so values a
 * client chooses cannot pile up).
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
  if (ADDRESS.test(url.host)) {
    return { group: registry.direct(url.host, url.port) };
  }
  return { message: `no resolver defined to resolve ${url.host}` };
}
