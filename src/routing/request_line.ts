/**
 * The request line as the logs show it, recovered from what `Deno.serve`
 * hands over (no version, the authority folded into `req.url`): HTTP/2
 * prior knowledge, an absolute-form target, and a `Host` as it appears in
 * the URL. The checks on it are in `request_line_checks.ts`.
 *
 * @module
 */

/**
 * Whether a request came over HTTP/2 without TLS (prior knowledge): the
 * only requests without a `Host` field whose URL is not `Deno.serve`'s
 * fallback `localhost:<port>`. `Deno.serve` answers the HTTP/2 preface on
 * any plain listener (`serve_http2_autodetect` in ext/http) and tells the
 * handler nothing else about the protocol; HTTP/2 carries the authority as
 * `:authority`, which `Deno.serve` puts in the URL, never in `Host`.
 *
 * @param url `req.url`.
 * @param host The `Host` field, or `null`.
 * @param port The port the gateway listens on.
 * @param scheme `https` on a TLS socket, where `Deno.serve` offers HTTP/2
 * by ALPN and the URL starts `https://`.
 * @returns Whether to treat it as HTTP/2.
 *
 * @example Usage
 * ```ts
 * import { looksLikeHttp2 } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(looksLikeHttp2("http://127.0.0.1:8081/api/x", null, 8081), true);
 * strictEqual(looksLikeHttp2("http://localhost:8081/api/x", null, 8081), false);
 * strictEqual(looksLikeHttp2("http://127.0.0.1:8081/api/x", "127.0.0.1:8081", 8081), false);
 * ```
 */
export function looksLikeHttp2(
  url: string,
  host: string | null,
  port: number,
  scheme: "http" | "https" = "http",
): boolean {
  if (host !== null) return false;
  const fallback = port === (scheme === "https" ? 443 : 80)
    ? `${scheme}://localhost`
    : `${scheme}://localhost:${port}`;
  const next = url.charAt(fallback.length);
  return !(url.startsWith(fallback) && (next === "/" || next === "?"));
}

/**
 * Fields HTTP/2 forbids (RFC 9113 §8.2.2; the runtime's HTTP/2 server
 * refuses a request with one): a request carrying one came over HTTP/1.x.
 */
const HTTP1_ONLY = ["connection", "keep-alive", "proxy-connection", "upgrade"];

/**
 * Whether a request without `Host` on a TLS socket is known to be
 * HTTP/1.x: `Deno.serve` tells the handler no protocol, and there an
 * HTTP/2 request's URL (its `:authority`) can equal the URL of an HTTP/1.x
 * one without `Host`; only a field HTTP/2 cannot carry tells them apart.
 * Read only for such requests.
 *
 * @param headers The request's fields.
 * @returns `true` when a field says HTTP/1.x.
 *
 * @example Usage
 * ```ts
 * import { spokeHttp1 } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(spokeHttp1(new Headers({ connection: "close" })), true);
 * strictEqual(spokeHttp1(new Headers({ accept: "*\/*" })), false);
 * ```
 */
export function spokeHttp1(headers: Headers): boolean {
  for (const name of HTTP1_ONLY) {
    if (headers.has(name)) return true;
  }
  // A chunked body: HTTP/2 frames its own (`Transfer-Encoding` refused).
  return headers.has("transfer-encoding");
}

/**
 * The request line for the logs. `Deno.serve` gives no version, so it is
 * `HTTP/1.1`; an HTTP/2 request is logged as nginx logs the preface it
 * refuses (`PRI * HTTP/2.0`); an absolute-form target is kept as sent when
 * it shows (its authority differs from `Host`).
 *
 * @param req The request.
 * @param parts The `Host` field, the origin-form target (from
 * `requestTarget`), whether {@linkcode looksLikeHttp2} said so, the
 * socket's scheme (`http` when absent), and the absolute-form authority
 * when already known.
 * @returns e.g. `GET /api/x HTTP/1.1`.
 *
 * @example Usage
 * ```ts
 * import { requestLine } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const req = new Request("http://other:9/api/abs?q=1", {
 *   headers: { host: "localhost:8081" },
 * });
 * strictEqual(
 *   requestLine(req, { host: "localhost:8081", target: "/api/abs?q=1", http2: false }),
 *   "GET http://other:9/api/abs?q=1 HTTP/1.1",
 * );
 * ```
 */
export function requestLine(
  req: Request,
  { host, target, http2, scheme = "http", authority }: {
    host: string | null;
    target: string;
    http2: boolean;
    scheme?: "http" | "https";
    /** {@linkcode absoluteAuthority}'s answer, when already asked. */
    authority?: string | null;
  },
): string {
  if (http2) {
    // Over TLS the HTTP/2 request is served, and logged as nginx logs it.
    return scheme === "https"
      ? `${req.method} ${target} HTTP/2.0`
      : "PRI * HTTP/2.0";
  }
  // A CONNECT target is an authority, which Deno.serve puts after "http://".
  if (req.method === "CONNECT") {
    return `CONNECT ${req.url.slice(req.url.indexOf("://") + 3)} HTTP/1.1`;
  }
  const absolute =
    (authority === undefined
      ? absoluteAuthority(req.url, host, target, scheme)
      : authority) !== null;
  return `${req.method} ${absolute ? req.url : target} HTTP/1.1`;
}

/**
 * The authority of an absolute-form request line, which nginx uses instead
 * of `Host` for the request's server (`ngx_http_process_request_uri`), so
 * for absolute redirects; `null` for origin-form. An origin-form URL is
 * `http://` + Host + target; anything else came from an absolute-form line,
 * which `req.url` holds as sent. One whose authority equals `Host` cannot be
 * told apart and needs no telling.
 *
 * @param url `req.url`.
 * @param host The `Host` field, or `null`.
 * @param target The origin-form target, from `requestTarget`.
 * @param scheme The socket's: `https` on a TLS socket.
 * @returns The authority, or `null`.
 *
 * @example Usage
 * ```ts
 * import { absoluteAuthority } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(absoluteAuthority("http://other:9/a", "h", "/a"), "other:9");
 * strictEqual(absoluteAuthority("http://other:9?q", "h", "/?q"), "other:9");
 * strictEqual(absoluteAuthority("http://h/a", "h", "/a"), null);
 * ```
 */
export function absoluteAuthority(
  url: string,
  host: string | null,
  target: string,
  scheme: "http" | "https" = "http",
): string | null {
  if (host === null || host === "") return null;
  if (joins(url, { scheme, host, target })) return null;
  const shown = urlHost(host);
  if (shown !== host && joins(url, { scheme, host: shown, target })) {
    return null;
  }
  const start = url.indexOf("://") + 3;
  const rest = url.slice(start);
  const end = rest.search(/[/?]/);
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * The target of an origin-form request whose URL is exactly `scheme://` +
 * `Host` + a target starting with `/`: then `requestTarget` finds that
 * target and {@linkcode absoluteAuthority} none, which this tells in one
 * pass over the URL's start (0.22 µs in a loop, the two 0.53–0.76). `null`
 * for anything else, which the two decide. Only for a
 * `Host` in ASCII (`urlHost` leaves it as it is), as the URL holds a
 * non-ASCII one decoded.
 *
 * @param url `req.url`.
 * @param host The `Host` field, in ASCII.
 * @param scheme The socket's: `https` on a TLS socket.
 * @returns The target, or `null`.
 *
 * @example Usage
 * ```ts
 * import { originTarget } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(originTarget("https://h:8443/a?b", "h:8443", "https"), "/a?b");
 * strictEqual(originTarget("http://other/a", "h", "http"), null);
 * ```
 */
export function originTarget(
  url: string,
  host: string,
  scheme: "http" | "https",
): string | null {
  const at = scheme.length + 3;
  const end = at + host.length;
  if (
    host === "" || url.charCodeAt(end) !== 0x2f || !url.startsWith(scheme) ||
    !url.startsWith("://", scheme.length) || !url.startsWith(host, at)
  ) {
    return null;
  }
  return url.slice(end);
}

/**
 * Whether `url` is `scheme://` + `host` + `target`, compared in place: the
 * joined string was two copies per request, and this runs for every one.
 */
function joins(
  url: string,
  { scheme, host, target }: { scheme: string; host: string; target: string },
): boolean {
  const at = scheme.length + 3;
  return url.length === at + host.length + target.length &&
    url.startsWith(scheme) && url.startsWith("://", scheme.length) &&
    url.startsWith(host, at) && url.endsWith(target);
}

/**
 * The authority of a URL (`host[:port]`), which for an HTTP/2 request is
 * its `:authority`, nginx's `Host` for it (`ngx_http_v2_parse_authority`).
 *
 * @param url `req.url`.
 * @returns The authority, `""` when there is none.
 *
 * @example Usage
 * ```ts
 * import { urlAuthority } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(urlAuthority("https://station.test:8443/a?b"), "station.test:8443");
 * ```
 */
export function urlAuthority(url: string): string {
  const start = url.indexOf("://") + 3;
  const rest = url.slice(start);
  const end = rest.search(/[/?#]/);
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * The `Host` field as `Deno.serve` puts it in `req.url`: its bytes (one
 * char per byte in `Headers`) read as UTF-8, so a non-ASCII Host is not
 * mistaken for an absolute-form request line.
 *
 * @param host The `Host` field, or `null`.
 * @returns The same text as in `req.url`.
 *
 * @example Usage
 * ```ts
 * import { urlHost } from "./request_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(urlHost("\xc3\xa9:8081"), "é:8081");
 * strictEqual(urlHost("localhost"), "localhost");
 * ```
 */
export function urlHost<T extends string | null>(host: T): T {
  if (host === null || isAscii(host)) return host;
  return new TextDecoder().decode(
    Uint8Array.from(host, (c) => c.charCodeAt(0)),
  ) as T;
}

/** Every char is ASCII: a loop, for the short `Host` of every request. */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) return false;
  }
  return true;
}
