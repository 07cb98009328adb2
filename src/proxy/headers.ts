/**
 * Header policy between the client and the upstream, both directions.
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import { transferEncodingOf } from "../upstream/mod.ts";

/**
 * Hop-by-hop fields, removed in both directions together with every field
 * the `Connection` header names (RFC 9110 §7.6.1). `Trailer` is added as Caddy
 * and Go's `httputil` do (`hopHeaders` in `reverseproxy.go`).
 */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * Request fields the gateway never forwards besides the hop-by-hop set:
 * `host` (the upstream gets its own, as nginx's `Host $proxy_host`),
 * `content-length` (the upstream client frames the body) and `expect`
 * (nginx answers `100 Continue` itself and strips it).
 */
const REQUEST_DROPPED = new Set(["host", "content-length", "expect"]);

/**
 * Response fields nginx hides by default (`ngx_http_proxy_hide_headers[]`):
 * the upstream's `Server`, and `X-Pad`/`X-Accel-*` internal fields.
 */
const RESPONSE_HIDDEN = new Set([
  "server",
  "x-pad",
  "x-accel-expires",
  "x-accel-redirect",
  "x-accel-limit-rate",
  "x-accel-buffering",
  "x-accel-charset",
]);

/**
 * The field names a `Connection` value lists, or `null` when it lists none
 * that matters: `keep-alive`, what browsers and nginx send, names a field
 * that is dropped anyway, so no set is built for it.
 */
function connectionTokens(value: string | null): Set<string> | null {
  if (value === null || value === "keep-alive") return null;
  const tokens = new Set<string>();
  for (const token of value.split(",")) {
    const t = token.trim().toLowerCase();
    if (t !== "") tokens.add(t);
  }
  return tokens;
}

/** Options for {@linkcode upstreamRequestHeaders}. */
export interface UpstreamRequestOptions
  extends Partial<Pick<GatewayConfig, "addForwardedHeaders">> {
  /** The client's address, for `X-Forwarded-For`. */
  clientAddress: string;
}

/**
 * Builds the headers sent upstream from the client's.
 *
 * Drops hop-by-hop fields, fields named in `Connection`, `Host`,
 * `Content-Length` (the upstream client frames the body itself), `Expect`,
 * and names with `_` (nginx's `underscores_in_headers off` drops them on
 * read). `Accept-Encoding` passes unchanged: the upstream's bytes reach the
 * client as they are, as with nginx.
 *
 * @param client The client's request headers.
 * @param options Forwarding options.
 * @returns The fields for the upstream request, in the client's order.
 *
 * @example Usage
 * ```ts
 * import { upstreamRequestHeaders } from "./headers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const h = upstreamRequestHeaders(
 *   new Headers({ connection: "keep-alive, x-foo", "x-foo": "1", cookie: "a=1" }),
 *   { clientAddress: "127.0.0.1" },
 * );
 * strictEqual(JSON.stringify(h), '[["cookie","a=1"]]');
 * ```
 */
export function upstreamRequestHeaders(
  client: Headers,
  options: UpstreamRequestOptions,
): [string, string][] {
  // A plain list, not a Headers object: the upstream client serializes it
  // directly, and a Headers copy would validate every field again.
  const named = connectionTokens(client.get("connection"));
  const out: [string, string][] = [];
  let forwardedFor: string | null = null;
  // forEach, not for..of: Deno's Headers iterator rebuilds and sorts the
  // combined list on every next() (the `headers entries` getter in
  // ext/fetch/20_headers.js caches it only for immutable headers), so
  // for..of costs a sort per field; forEach builds the list once.
  client.forEach((value, name) => {
    if (
      HOP_BY_HOP_HEADERS.has(name) || REQUEST_DROPPED.has(name) ||
      named?.has(name) || name.includes("_")
    ) return;
    if (options.addForwardedHeaders && name.startsWith("x-forwarded-")) {
      if (name === "x-forwarded-for") forwardedFor = value;
      return;
    }
    out.push([name, value]);
  });
  if (options.addForwardedHeaders) {
    out.push([
      "x-forwarded-for",
      forwardedFor
        ? `${forwardedFor}, ${options.clientAddress}`
        : options.clientAddress,
    ]);
    out.push(["x-forwarded-proto", "http"]);
    const host = client.get("host");
    if (host !== null) out.push(["x-forwarded-host", host]);
  }
  return out;
}

/** Options for {@linkcode clientResponseHeaders}. */
export interface ClientResponseOptions {
  /** The upstream origin whose absolute URLs are rewritten. */
  upstreamOrigin: string;
  /** The gateway's own absolute `/api/` URL that replaces it. */
  publicApiBase: string;
  /**
   * The body's length as framed upstream: sent as the only
   * `Content-Length`. When `null` or absent, the upstream's fields pass as
   * they are (a HEAD answer keeps the length of the body it did not send).
   */
  contentLength?: number | null;
}

/**
 * Applies nginx's `proxy_redirect default` to one `Location` or `Refresh`
 * value: a value starting with `<upstream origin>/` gets that part replaced
 * by the gateway's `/api/` URL; anything else is left alone.
 *
 * @param value The header value.
 * @param upstreamOrigin e.g. `http://127.0.0.1:8080`.
 * @param publicApiBase e.g. `http://localhost:8081/api/`.
 * @returns The rewritten value.
 *
 * @example Usage
 * ```ts
 * import { rewriteRedirect } from "./headers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(
 *   rewriteRedirect("http://127.0.0.1:8080/foo?a=1", "http://127.0.0.1:8080", "http://localhost:8081/api/"),
 *   "http://localhost:8081/api/foo?a=1",
 * );
 * ```
 */
export function rewriteRedirect(
  value: string,
  upstreamOrigin: string,
  publicApiBase: string,
): string {
  const prefix = `${upstreamOrigin}/`;
  if (value.startsWith(prefix)) {
    return publicApiBase + value.slice(prefix.length);
  }
  // Refresh: "5; url=http://..." (nginx rewrites the URL after "url=").
  const m = value.match(/^(\s*\d+\s*;\s*url\s*=\s*)(.*)$/i);
  if (m?.[1] !== undefined && m[2]?.startsWith(prefix)) {
    return m[1] + publicApiBase + m[2].slice(prefix.length);
  }
  return value;
}

/**
 * Builds the headers sent to the client from the upstream's.
 *
 * Drops hop-by-hop fields, fields named in `Connection`, and the ones nginx
 * hides; rewrites `Location`/`Refresh`; keeps every `Set-Cookie` separate.
 * `Content-Encoding` and `Content-Length` pass unchanged: the body's bytes
 * are the upstream's own; but no `Content-Length` beside a
 * `Transfer-Encoding`, which frames the body instead.
 *
 * A plain list, lower-case names, in the upstream's order: `new Response`
 * takes it as it is, where a `Headers` object would be filled first and
 * then copied again.
 *
 * @param upstream The upstream response's fields, as received.
 * @param options Rewrite options.
 * @returns The fields for the client.
 *
 * @example Usage
 * ```ts
 * import { clientResponseHeaders } from "./headers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const h = clientResponseHeaders(
 *   [["Content-Encoding", "gzip"], ["Keep-Alive", "timeout=5"]],
 *   { upstreamOrigin: "http://127.0.0.1:8080", publicApiBase: "/api/" },
 * );
 * strictEqual(JSON.stringify(h), '[["content-encoding","gzip"]]');
 * ```
 */
export function clientResponseHeaders(
  upstream: readonly (readonly [string, string])[],
  options: ClientResponseOptions,
): [string, string][] {
  // Indexed loops: destructuring `[name, value]` runs the iterator protocol
  // for each field.
  let named: Set<string> | null = null;
  for (let i = 0; i < upstream.length; i++) {
    const name = upstream[i]![0];
    // The length first: lower-casing every name here made a string each.
    if (name.length === 10 && name.toLowerCase() === "connection") {
      // Every Connection field counts (RFC 9110 §5.3: they are one list).
      const tokens = connectionTokens(upstream[i]![1]);
      if (named === null) named = tokens;
      else for (const t of tokens ?? []) named.add(t);
    }
  }
  const length = options.contentLength ?? null;
  // A Transfer-Encoding overrides the upstream's Content-Length (RFC 9112
  // §6.3): relayed, it would promise bytes the framing never delivers.
  const dropLength = length !== null ||
    transferEncodingOf(upstream) !== undefined;
  const out: [string, string][] = [];
  for (let i = 0; i < upstream.length; i++) {
    const name = upstream[i]![0].toLowerCase();
    const value = upstream[i]![1];
    if (
      HOP_BY_HOP_HEADERS.has(name) || RESPONSE_HIDDEN.has(name) ||
      named?.has(name) || (dropLength && name === "content-length")
    ) continue;
    if (name === "location" || name === "refresh") {
      out.push([
        name,
        rewriteRedirect(value, options.upstreamOrigin, options.publicApiBase),
      ]);
      continue;
    }
    out.push([name, value]);
  }
  if (length !== null) out.push(["content-length", String(length)]);
  return out;
}
