/**
 * Whether a request may get a gzip-encoded response, as `ngx_http_gzip_ok`
 * decides it under a location's `gzip_http_version`, `gzip_proxied` and
 * `gzip_disable` (nginx's defaults when none is given): `gzip_static on`
 * and the gzip filter both ask it. The one reader of `Accept-Encoding`.
 *
 * @module
 */

import type { GzipOkConf } from "../engine/mod.ts";
import { httpTimeMs } from "./http_time.ts";
import { firstLine } from "../runtime/mod.ts";

/** nginx's defaults: `gzip_http_version 1.1`, `gzip_proxied off`, no `gzip_disable`. */
export const NGINX_GZIP_OK: GzipOkConf = {
  httpVersion: "1.1",
  proxied: new Set(["off"]),
  disable: [],
  disableMsie6: false,
};

/** What of a request {@linkcode gzipAccepted} reads. */
export interface GzipRequest {
  /** The request's header fields. */
  headers: Headers;
  /** `$server_protocol`: `HTTP/1.0`, `HTTP/1.1`, `HTTP/2.0`. */
  protocol: string;
}

/**
 * Tells whether a request accepts gzip as nginx reads it: `gzip` in
 * `Accept-Encoding` (any case) at the start or after `,` or a space, not
 * with a zero `q`; then `gzip_disable msie6`, `gzip_http_version`, for a
 * request with `Via` (one that came through a proxy) `gzip_proxied` on the
 * response's fields, and `gzip_disable`'s regexes on `User-Agent`.
 *
 * nginx's reading is kept where it differs from RFC 9110 §12.5.3: `*` does
 * not count, and a malformed `q` declines.
 *
 * @param r The request.
 * @param conf The location's settings.
 * @param response The response's fields, for `gzip_proxied` (`gzip_static`
 * asks before there are any).
 * @returns Whether to send gzip.
 *
 * @example Usage
 * ```ts
 * import { gzipAccepted } from "./gzip_accept.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const r = (ae: string) => ({ headers: new Headers({ "accept-encoding": ae }), protocol: "HTTP/1.1" });
 * strictEqual(gzipAccepted(r("gzip, deflate, br")), true);
 * strictEqual(gzipAccepted(r("gzip;q=0")), false);
 * strictEqual(gzipAccepted(r("*")), false);
 * ```
 */
export function gzipAccepted(
  r: GzipRequest,
  conf: GzipOkConf = NGINX_GZIP_OK,
  response: Pick<Headers, "get" | "has"> | null = null,
): boolean {
  const { headers } = r;
  // Each field's first line, as nginx 1.22 reads them.
  const ae = firstLine(
    headers,
    "accept-encoding",
    headers.get("accept-encoding"),
  );
  if (ae === null || ae.length < 4) return false;
  if (!ae.startsWith("gzip,") && !acceptEncodingHasGzip(ae)) return false;
  const ua = firstLine(headers, "user-agent", headers.get("user-agent"));
  if (conf.disableMsie6 && ua !== null && isMsie6(ua)) return false;
  if (
    r.protocol === "HTTP/0.9" ||
    (r.protocol === "HTTP/1.0" && conf.httpVersion === "1.1")
  ) {
    return false;
  }
  if (headers.has("via") && !proxiedOk(r, conf.proxied, response)) {
    return false;
  }
  if (ua !== null) {
    for (const re of conf.disable) {
      re.lastIndex = 0;
      if (re.test(ua)) return false;
    }
  }
  return true;
}

/**
 * `gzip_proxied` for a request with `Via`, in `ngx_http_gzip_ok`'s order:
 * `off`, `any`, `auth`; then the first of `Expires` or `Cache-Control`
 * the response has decides; else `no_last_modified` and `no_etag` can
 * still decline, and anything left takes gzip.
 */
function proxiedOk(
  r: GzipRequest,
  p: ReadonlySet<string>,
  response: Pick<Headers, "get" | "has"> | null,
): boolean {
  if (p.has("off")) return false;
  if (p.has("any")) return true;
  if (p.has("auth") && r.headers.has("authorization")) return true;
  if (response === null) return true;
  const expires = response.get("expires");
  if (expires !== null) {
    if (!p.has("expired")) return false;
    const at = httpTimeMs(expires);
    const dateField = response.get("date");
    const date = dateField === null ? Date.now() : httpTimeMs(dateField);
    if (at === null || date === null) return false;
    return Math.floor(at / 1000) < Math.floor(date / 1000);
  }
  const cc = response.get("cache-control");
  if (cc !== null) {
    return (p.has("no-cache") && hasDirective(cc, "no-cache")) ||
      (p.has("no-store") && hasDirective(cc, "no-store")) ||
      (p.has("private") && hasDirective(cc, "private"));
  }
  if (p.has("no_last_modified") && response.has("last-modified")) return false;
  return !(p.has("no_etag") && response.has("etag"));
}

/**
 * `ngx_http_parse_multi_header_lines` without a value: `name` (any case)
 * at the start of a list element, followed by spaces and then the end or
 * a `,` (so `private="x"` does not count).
 */
function hasDirective(value: string, name: string): boolean {
  const lower = value.toLowerCase();
  let i = 0;
  while (i < lower.length) {
    if (lower.startsWith(name, i)) {
      let j = i + name.length;
      while (lower[j] === " ") j++;
      if (j === lower.length || lower[j] === ",") return true;
    }
    const comma = lower.indexOf(",", i);
    if (comma < 0) return false;
    i = comma + 1;
    while (lower[i] === " ") i++;
  }
  return false;
}

/**
 * `r->headers_in.msie6` (ngx_http_process_user_agent): `MSIE 4.`, `MSIE
 * 5.`, or `MSIE 6.` without `SV1` after it, and no `Opera`.
 */
function isMsie6(ua: string): boolean {
  const at = ua.indexOf("MSIE ");
  if (at < 0 || at + 7 >= ua.length || ua.includes("Opera")) return false;
  if (ua[at + 6] !== ".") return false;
  const major = ua[at + 5];
  if (major === "4" || major === "5") return true;
  return major === "6" && !ua.includes("SV1", at + 8);
}

/** `ngx_http_gzip_accept_encoding`. */
function acceptEncodingHasGzip(ae: string): boolean {
  const lower = ae.toLowerCase();
  let from = 0;
  let p: number;
  for (;;) {
    p = lower.indexOf("gzip", from);
    if (p < 0) return false;
    if (p === 0 || lower[p - 1] === "," || lower[p - 1] === " ") break;
    from = p + 4;
  }
  let i = p + 4;
  while (i < ae.length) {
    const c = ae[i++];
    if (c === ",") return true;
    if (c === ";") return quantityNotZero(ae, i);
    if (c !== " ") return false;
  }
  return true;
}

/** After `gzip;`: ` q=<value>`, whose value must not be zero. */
function quantityNotZero(ae: string, from: number): boolean {
  let i = from;
  while (i < ae.length) {
    const c = ae[i++];
    if (c === "q" || c === "Q") {
      if (i + 2 > ae.length || ae[i++] !== "=") return false;
      return quantity(ae, i) !== 0;
    }
    if (c !== " ") return false;
  }
  return true;
}

/**
 * `ngx_http_gzip_quantity`: `0`, `1`, or either with up to three decimals;
 * anything else is 0. nginx adds the decimals as digits (so `0.5` is 5):
 * only zero or not matters.
 */
function quantity(ae: string, from: number): number {
  let i = from;
  const first = ae[i++];
  if (first !== "0" && first !== "1") return 0;
  let q = (first === "1" ? 1 : 0) * 100;
  if (i === ae.length) return q;
  const c = ae[i++];
  if (c === "," || c === " ") return q;
  if (c !== ".") return 0;
  let n = 0;
  while (i < ae.length) {
    const d = ae[i++]!;
    if (d === "," || d === " ") break;
    if (d < "0" || d > "9") return 0;
    q += d.charCodeAt(0) - 48;
    n++;
  }
  return q > 100 || n > 3 ? 0 : q;
}
