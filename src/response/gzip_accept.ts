/**
 * Whether a request may get a gzip-encoded response, as `ngx_http_gzip_ok`
 * decides it with nginx's defaults (`gzip_http_version 1.1`,
 * `gzip_proxied off`, no `gzip_disable`): `gzip_static on` and the gzip
 * filter both ask it.
 *
 * @module
 */

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
 * with a zero `q`, in an HTTP/1.1 or later request that has no `Via` (a
 * proxied request gets no gzip under `gzip_proxied off`).
 *
 * nginx's reading is kept where it differs from RFC 9110 §12.5.3: `*` does
 * not count, and a malformed `q` declines.
 *
 * @param r The request.
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
export function gzipAccepted(r: GzipRequest): boolean {
  const ae = r.headers.get("accept-encoding");
  if (ae === null || ae.length < 4) return false;
  if (!ae.startsWith("gzip,") && !acceptEncodingHasGzip(ae)) return false;
  if (r.protocol === "HTTP/1.0" || r.protocol === "HTTP/0.9") return false;
  return !r.headers.has("via");
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
