/**
 * A location's `proxy_pass` and the rewrites of what comes back
 * (`proxy_redirect`, `proxy_cookie_domain`, `proxy_cookie_path`), compiled,
 * in the configuration model (`model.ts`; `ngx_http_proxy_module`).
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";

/** The upstream URL of `proxy_pass`, compiled. */
export interface ProxyPass {
  /** `http` (https upstreams are refused for now). */
  scheme: "http";
  /**
   * The `upstream{}` name, or the implicit group of one `host:port`
   * (nginx: `ngx_http_upstream_add` makes one per distinct address); empty
   * when `url` is set.
   */
  group: string;
  /** `$proxy_host`: the host and port as written (`127.0.0.1:8080`, `backend`). */
  proxyHost: string;
  /**
   * The URI part (`/`, `/v1/`), or `null` when `proxy_pass` has none: then
   * the request URI goes as the client sent it (or as rewritten).
   */
  uri: string | null;
  /** `proxy_pass` with variables: evaluated per request (no URI rule). */
  dynamic: ComplexValue | null;
  /**
   * `proxy_pass` with variables in its host or port: the whole URL,
   * evaluated per request and read then (`ngx_http_proxy_eval`); the group
   * is the one it names (proxy/proxy_url.ts).
   */
  url: ComplexValue | null;
  /** The text as written, for `proxy_redirect default` and messages. */
  text: string;
}

/** One `proxy_redirect` pair. */
export type ProxyRedirect =
  | { kind: "text"; from: ComplexValue; to: ComplexValue }
  | { kind: "regex"; regex: RegExp; to: ComplexValue };

/**
 * One `proxy_cookie_domain` or `proxy_cookie_path` pair. A text pair
 * matches a domain whole without regard to case (leading dots aside), a
 * path as a case-sensitive prefix; a regex pair (`~`, `~*` for paths)
 * replaces the whole value, captures available.
 */
export type CookieRewrite =
  | { kind: "text"; from: ComplexValue; to: ComplexValue }
  | { kind: "regex"; regex: RegExp; to: ComplexValue };
