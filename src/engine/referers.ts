/**
 * `valid_referers` and `$invalid_referer` (ngx_http_referer_module): the
 * `Referer` field's host, lower case up to its port or path, against the
 * names (exact, then `*.example.com`, then `example.*`, each with an
 * optional path prefix), then the server's regex names, then the `~`
 * regexes (without case) against the field after its scheme; `none` takes
 * a request without the field, `blocked` one whose field is not
 * `http://` or `https://`.
 *
 * @module
 */

import { findHostname, type HostnameWildcards } from "./hostname_keys.ts";

/** A level's `valid_referers`, compiled. */
export interface Referers {
  /** `none`. */
  none: boolean;
  /** `blocked`. */
  blocked: boolean;
  /** Exact names, lower case: a path prefix, or `null` for any path. */
  exact: ReadonlyMap<string, string | null>;
  /** Wildcard names, longest first. */
  wildcards: HostnameWildcards<string | null>;
  /** The server's regex names (`server_names`), against the host. */
  serverNameRegexes: readonly RegExp[];
  /** `~` entries, against the field after its scheme. */
  regexes: readonly RegExp[];
}

/**
 * `$invalid_referer` (ngx_http_referer_variable): `""` when the field is
 * valid (or no `valid_referers` applies), `"1"` otherwise.
 *
 * @param referers The location's setting, if any.
 * @param field The request's first `Referer` line, `null` when none.
 * @returns The value.
 *
 * @example Usage
 * ```ts
 * import { invalidReferer } from "./referers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const referers = {
 *   none: true, blocked: false, exact: new Map([["ex.com", null]]),
 *   wildcards: { leading: [], trailing: [] }, serverNameRegexes: [], regexes: [],
 * };
 * strictEqual(invalidReferer(referers, null), "");
 * strictEqual(invalidReferer(referers, "http://ex.com:8080/a"), "");
 * strictEqual(invalidReferer(referers, "http://other.com/"), "1");
 * ```
 */
export function invalidReferer(
  referers: Referers | undefined,
  field: string | null,
): string {
  if (referers === undefined) return "";
  if (field === null) return referers.none ? "" : "1";
  const scheme = field.length < "http://i.ru".length
    ? 0
    : /^http:\/\//i.test(field)
    ? 7
    : /^https:\/\//i.test(field)
    ? 8
    : 0;
  if (scheme === 0) return referers.blocked ? "" : "1";
  const rest = field.slice(scheme);
  let end = 0;
  while (end < rest.length && rest[end] !== "/" && rest[end] !== ":") end++;
  // nginx copies the host into a 256-byte buffer.
  if (end > 256) return "1";
  const host = rest.slice(0, end).toLowerCase();
  const uri = findHostname(referers.exact, referers.wildcards, host);
  if (uri !== undefined) {
    if (uri === null) return "";
    const slash = rest.indexOf("/", end);
    const path = slash < 0 ? "" : rest.slice(slash);
    return path.startsWith(uri) ? "" : "1";
  }
  for (const regex of referers.serverNameRegexes) {
    if (regex.test(host)) return "";
  }
  for (const regex of referers.regexes) {
    if (regex.test(rest)) return "";
  }
  return "1";
}
