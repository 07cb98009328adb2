/**
 * The upstream response's fields as a proxied location relays them, after
 * nginx's `ngx_http_upstream_process_headers`: the fields nginx hides by
 * default (`ngx_http_proxy_hide_headers[]`: `Date`, `Server`, `X-Pad`,
 * `X-Accel-*`) and those of `proxy_hide_header` are dropped unless
 * `proxy_pass_header` names them; `Location` and `Refresh` go through the
 * location's `proxy_redirect` list (`ngx_http_proxy_rewrite_redirect`), and
 * a rewritten `Location` that starts with `/` is made absolute as nginx's
 * header filter does (`absolute_redirect on`).
 *
 * @module
 */

import {
  type LocationConf,
  type ProxyRedirect,
  type RequestVars,
  setNamed,
} from "../engine/mod.ts";
import { escapeControls } from "../response/mod.ts";
import { fieldBytes, fieldText } from "../runtime/mod.ts";
import { NEVER_RELAYED, transferEncodingOf } from "../upstream/mod.ts";
import { rewriteSetCookie } from "./cookie_rewrite.ts";
import { perObject } from "./location_memo.ts";

/** Hidden unless `proxy_pass_header` names them. */
const DEFAULT_HIDDEN = [
  "date",
  "server",
  "x-pad",
  "x-accel-expires",
  "x-accel-redirect",
  "x-accel-limit-rate",
  "x-accel-buffering",
  "x-accel-charset",
];

/** The names a location does not relay, made on first use. */
const hiddenFor = perObject((conf: LocationConf): ReadonlySet<string> => {
  const hidden = new Set(DEFAULT_HIDDEN);
  for (const name of conf.proxyHideHeaders) hidden.add(name);
  for (const name of conf.proxyPassHeaders) hidden.delete(name);
  for (const name of NEVER_RELAYED) hidden.add(name);
  return hidden;
});

/**
 * Applies a `proxy_redirect` list to a value from `prefix` on, as
 * `ngx_http_proxy_rewrite_redirect` does: the first pair that matches wins;
 * a text pair replaces the leading text it equals (case-sensitive), a regex
 * pair replaces everything from `prefix` on with its replacement (which may
 * use the match's captures).
 *
 * @param value The field's value.
 * @param prefix Where the URL starts (after `url=` in `Refresh`).
 * @param redirects The location's list.
 * @param vars The request's variables (captures are set while a regex
 * pair's replacement is evaluated, then restored).
 * @returns The new value, or `null` when no pair matched.
 *
 * @example Usage
 * ```ts
 * import { rewriteRedirectValue } from "./response_fields.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const value = (text: string) => ({ text, constant: text, usesCaptures: false, evaluate: () => text });
 * const redirects = [{ kind: "text" as const, from: value("http://backend/"), to: value("/api/") }];
 * strictEqual(rewriteRedirectValue("http://backend/login?a=1", 0, redirects, {} as never), "/api/login?a=1");
 * strictEqual(rewriteRedirectValue("http://other/login", 0, redirects, {} as never), null);
 * ```
 */
export function rewriteRedirectValue(
  value: string,
  prefix: number,
  redirects: readonly ProxyRedirect[],
  vars: RequestVars,
): string | null {
  const url = value.slice(prefix);
  for (const pair of redirects) {
    if (pair.kind === "text") {
      const from = pair.from.constant ?? pair.from.evaluate(vars);
      if (!url.startsWith(from)) continue;
      const to = pair.to.constant ?? pair.to.evaluate(vars);
      return value.slice(0, prefix) + to + url.slice(from.length);
    }
    pair.regex.lastIndex = 0;
    const m = pair.regex.exec(url);
    if (m === null) continue;
    const saved = vars.captures;
    vars.captures = [...m].map((c) => c ?? "");
    // Named captures are variables from here on (ngx_http_regex_exec).
    if (m.groups !== undefined) setNamed(vars, m.groups);
    try {
      return value.slice(0, prefix) + pair.to.evaluate(vars);
    } finally {
      vars.captures = saved;
    }
  }
  return null;
}

/** Options for {@linkcode locationResponseFields}. */
export interface ResponseFieldOptions {
  /** The location: its `proxy_redirect`, `proxy_hide_header`, `proxy_pass_header`. */
  conf: LocationConf;
  /** The request's variables. */
  vars: RequestVars;
  /**
   * `http://host[:port]` the client reached: what a rewritten `Location`
   * starting with `/` is prefixed with.
   */
  origin: string;
  /** The body's length as framed upstream, sent as the only `Content-Length`; `null` when not known. */
  contentLength: number | null;
}

/**
 * The fields sent to the client, lower-case names, in the upstream's order.
 *
 * @param upstream The upstream's fields as received.
 * @param options The location and the request.
 * @returns The fields.
 *
 * @example Usage
 * ```ts
 * import { locationResponseFields } from "./response_fields.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = {
 *   proxyRedirect: [], proxyCookieDomain: [], proxyCookiePath: [],
 *   proxyHideHeaders: new Set(["x-secret"]), proxyPassHeaders: new Set(["server"]),
 * };
 * const out = locationResponseFields(
 *   [["Server", "up"], ["X-Secret", "1"], ["Date", "x"], ["Content-Length", "2"]],
 *   { conf: conf as never, vars: {} as never, origin: "http://h", contentLength: 2 },
 * );
 * strictEqual(JSON.stringify(out), '[["server","up"],["content-length","2"]]');
 * ```
 */
export function locationResponseFields(
  upstream: readonly (readonly [string, string])[],
  options: ResponseFieldOptions,
): [string, string][] {
  const { conf } = options;
  const hidden = hiddenFor(conf);
  const redirects = conf.proxyRedirect;
  const cookies = conf.proxyCookieDomain.length > 0 ||
    conf.proxyCookiePath.length > 0;
  const length = options.contentLength;
  // A Transfer-Encoding frames the body instead of the upstream's length
  // (RFC 9112 §6.3): that length is not relayed then.
  const upstreamLength = length === null &&
      transferEncodingOf(upstream) === undefined
    ? upstream.find(([n]) => n.toLowerCase() === "content-length")?.[1]
    : undefined;
  const out: [string, string][] = [];
  for (let i = 0; i < upstream.length; i++) {
    const name = upstream[i]![0].toLowerCase();
    let value = upstream[i]![1];
    if (hidden.has(name)) continue;
    // A replacement's variables may hold a client's decoded line break.
    // The upstream's bytes are rewritten as the text variables hold, and
    // the result sent as its bytes (runtime/value_bytes.ts).
    if (redirects.length > 0 && (name === "location" || name === "refresh")) {
      const text = redirected(name, fieldText(value), options);
      value = escapeControls(text === null ? value : fieldBytes(text));
    } else if (cookies && name === "set-cookie") {
      const text = rewriteSetCookie(fieldText(value), conf, options.vars);
      value = escapeControls(text === null ? value : fieldBytes(text));
    }
    out.push([name, value]);
  }
  if (length !== null) out.push(["content-length", String(length)]);
  else if (upstreamLength !== undefined) {
    // A HEAD answer keeps the length of the body it did not send.
    out.push(["content-length", upstreamLength]);
  }
  return out;
}

/** A `Location` or `Refresh` value through `proxy_redirect`, or `null`. */
function redirected(
  name: string,
  value: string,
  { conf, vars, origin }: ResponseFieldOptions,
): string | null {
  if (name === "refresh") {
    // ngx_http_upstream_rewrite_refresh: the URL after `url=`, any case.
    const at = value.toLowerCase().indexOf("url=");
    if (at < 0) return null;
    return rewriteRedirectValue(value, at + 4, conf.proxyRedirect, vars);
  }
  const rewritten = rewriteRedirectValue(value, 0, conf.proxyRedirect, vars);
  // Only a rewritten Location becomes r->headers_out.location, which the
  // header filter makes absolute; one left alone goes as it came.
  return rewritten !== null && rewritten.startsWith("/")
    ? fieldText(origin) + rewritten
    : rewritten;
}
