/**
 * `proxy_cookie_domain` and `proxy_cookie_path` on an upstream
 * `Set-Cookie` (`ngx_http_proxy_rewrite_cookie`): the value is split into
 * its `;`-separated attributes, each `domain=` and `path=` (any case) goes
 * through the location's pairs (the first that matches wins), and a value
 * that changed is written back as nginx writes it: attributes trimmed and
 * joined with `; `. A value nothing matched goes as it came.
 *
 * @module
 */

import {
  type CookieRewrite,
  type RequestVars,
  setNamed,
} from "../engine/mod.ts";

/** The location's pairs. */
export interface CookieRewrites {
  /** `proxy_cookie_domain`. */
  proxyCookieDomain: readonly CookieRewrite[];
  /** `proxy_cookie_path`. */
  proxyCookiePath: readonly CookieRewrite[];
}

/**
 * The `Set-Cookie` value to relay, or `null` to relay the upstream's.
 *
 * @param value The upstream's value.
 * @param conf The location's pairs.
 * @param vars The request, for values with variables and captures.
 * @returns The rewritten value, or `null`.
 *
 * @example Usage
 * ```ts
 * import { rewriteSetCookie } from "./cookie_rewrite.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const value = (text: string) => ({ text, constant: text, usesCaptures: false, evaluate: () => text });
 * const conf = {
 *   proxyCookieDomain: [{ kind: "text" as const, from: value("backend.local"), to: value("station.example") }],
 *   proxyCookiePath: [{ kind: "text" as const, from: value("/app/"), to: value("/api/") }],
 * };
 * strictEqual(
 *   rewriteSetCookie("id=1;Path=/app/x;  Domain=.Backend.Local;HttpOnly", conf, {} as never),
 *   "id=1; Path=/api/x; Domain=.station.example; HttpOnly",
 * );
 * strictEqual(rewriteSetCookie("id=1; Path=/other", conf, {} as never), null);
 * ```
 */
export function rewriteSetCookie(
  value: string,
  conf: CookieRewrites,
  vars: RequestVars,
): string | null {
  const attrs = parseCookie(value);
  // A first pair without `=` is no cookie: left alone.
  if (attrs[0]!.value === null) return null;
  let changed = false;
  for (let i = 1; i < attrs.length; i++) {
    const attr = attrs[i]!;
    if (attr.value === null) continue;
    const key = attr.key.toLowerCase();
    const list = key === "domain"
      ? conf.proxyCookieDomain
      : key === "path"
      ? conf.proxyCookiePath
      : null;
    if (list === null || list.length === 0) continue;
    const next = rewriteValue(attr.value, list, key === "domain", vars);
    if (next !== null) {
      attr.value = next;
      changed = true;
    }
  }
  if (!changed) return null;
  return attrs.map((a) => a.value === null ? a.key : `${a.key}=${a.value}`)
    .join("; ");
}

/** `ngx_http_proxy_parse_cookie`: `key[=value]` pieces, spaces trimmed. */
function parseCookie(value: string): { key: string; value: string | null }[] {
  return value.split(";").map((piece) => {
    const eq = piece.indexOf("=");
    if (eq < 0) return { key: piece.trim(), value: null };
    return {
      key: piece.slice(0, eq).trim(),
      value: piece.slice(eq + 1).trim(),
    };
  });
}

/** The first pair that matches, applied (`ngx_http_proxy_rewrite_cookie_value`). */
function rewriteValue(
  value: string,
  list: readonly CookieRewrite[],
  domain: boolean,
  vars: RequestVars,
): string | null {
  for (const pair of list) {
    if (pair.kind === "regex") {
      pair.regex.lastIndex = 0;
      const m = pair.regex.exec(value);
      if (m === null) continue;
      const saved = vars.captures;
      vars.captures = [...m].map((c) => c ?? "");
      // Named captures are variables from here on (ngx_http_regex_exec).
      if (m.groups !== undefined) setNamed(vars, m.groups);
      try {
        return pair.to.evaluate(vars);
      } finally {
        vars.captures = saved;
      }
    }
    const from = pair.from.constant ?? pair.from.evaluate(vars);
    const to = () => pair.to.constant ?? pair.to.evaluate(vars);
    if (domain) {
      // ngx_http_proxy_rewrite_domain_handler: the cookie's own leading
      // dot stays; the rest must equal the pattern, any case.
      const dot = value.startsWith(".") ? "." : "";
      if (value.slice(dot.length).toLowerCase() !== from.toLowerCase()) {
        continue;
      }
      return dot + to();
    }
    // ngx_http_proxy_rewrite_complex_handler: a case-sensitive prefix.
    if (!value.startsWith(from)) continue;
    return to() + value.slice(from.length);
  }
  return null;
}
