/**
 * A back end's address as nginx reads it (`ngx_parse_url` without
 * resolving): for `proxy_pass` after its `http://`, when the file is read
 * and when a URL with variables is evaluated per request, for an
 * `upstream{}`'s `server` and for `fastcgi_pass`. One reader, so the file's
 * refusals and a request's 500 say the same as nginx.
 *
 * @module
 */

import { hostAddress } from "../access/mod.ts";

/** An address's parts, or nginx's reason it is none. */
export type ParsedAddress =
  | {
    ok: true;
    /** The host as written: a name, an IPv4 address, `[IPv6]`. */
    host: string;
    /** The port, 80 when none is written. */
    port: number;
    /** No port was written. */
    noPort: boolean;
    /** What follows the address (`/x`, `?q`), empty when nothing. */
    uri: string;
  }
  | {
    ok: false;
    /** nginx's words (`no host`), which it prints as `… in upstream "TEXT"`. */
    error: string;
  };

/**
 * Reads `host[:port]` as `ngx_parse_inet_url` and `ngx_parse_inet6_url` do.
 *
 * @param text The address as written (after `http://` for `proxy_pass`).
 * @param uriPart Whether a URI may follow (`proxy_pass`); elsewhere a `/`
 *   or `?` is `invalid host`.
 * @returns The parts, or nginx's reason.
 *
 * @example Usage
 * ```ts
 * import { parseUpstreamAddress } from "./address.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseUpstreamAddress("10.0.0.5:8080/api/", true), {
 *   ok: true, host: "10.0.0.5", port: 8080, noPort: false, uri: "/api/",
 * });
 * deepStrictEqual(parseUpstreamAddress(":8080", false), {
 *   ok: false, error: "no host",
 * });
 * ```
 */
export function parseUpstreamAddress(
  text: string,
  uriPart: boolean,
): ParsedAddress {
  if (text.startsWith("[")) return inet6(text, uriPart);
  const slash = text.indexOf("/");
  const query = text.indexOf("?");
  const uriAt = slash < 0 ? query : query < 0 ? slash : Math.min(slash, query);
  if (uriAt >= 0 && !uriPart) return fail("invalid host");
  const end = uriAt < 0 ? text.length : uriAt;
  // The first `:` starts the port (ngx_parse_inet_url's ngx_strlchr).
  const colon = text.indexOf(":");
  const hostEnd = colon < 0 || colon > end ? end : colon;
  const host = text.slice(0, hostEnd);
  let port = 80;
  let noPort = true;
  if (hostEnd < end) {
    const n = atoiPort(text.slice(hostEnd + 1, end));
    if (n < 0) return fail("invalid port");
    port = n;
    noPort = false;
  }
  if (host === "") return fail("no host");
  return { ok: true, host, port, noPort, uri: text.slice(end) };
}

function fail(error: string): ParsedAddress {
  return { ok: false, error };
}

/**
 * `ngx_parse_inet6_url`: the host is `[…]` up to the first `]`, the URI
 * starts at a `/` after it (a `?` is no end there), anything between them
 * is `:port`, and the host must be an IPv6 address.
 */
function inet6(text: string, uriPart: boolean): ParsedAddress {
  const close = text.indexOf("]");
  if (close < 0) return fail("invalid host");
  const slash = text.indexOf("/", close + 1);
  if (slash >= 0 && !uriPart) return fail("invalid host");
  const end = slash < 0 ? text.length : slash;
  let port = 80;
  let noPort = true;
  if (close + 1 < end) {
    if (text[close + 1] !== ":") return fail("invalid host");
    const n = atoiPort(text.slice(close + 2, end));
    if (n < 0) return fail("invalid port");
    port = n;
    noPort = false;
  }
  if (close === 1) return fail("no host");
  const host = text.slice(0, close + 1);
  if (hostAddress(host) === null) return fail("invalid IPv6 address");
  return { ok: true, host, port, noPort, uri: text.slice(end) };
}

/** `ngx_atoi` of a port, 1 to 65535, or -1. */
function atoiPort(text: string): number {
  if (!/^\d+$/.test(text)) return -1;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : -1;
}
