/**
 * An upstream's `X-Accel-Redirect`, as nginx follows it
 * (`ngx_http_upstream_process_headers`): unless `proxy_ignore_headers
 * X-Accel-Redirect`, the upstream's body is dropped, the fields nginx
 * marks to keep through the redirect are kept, and the request goes on
 * as an internal redirect to the URI (or `@name`) the field names, as GET
 * unless it is a HEAD. The relay makes a stand-in response that says so;
 * the request flow follows it.
 *
 * @module
 */

import {
  type LocationConf,
  type RequestVars,
  unescapeUri,
} from "../engine/mod.ts";
import { escapeControls, makeResponse } from "../response/mod.ts";
import { fieldBytes, fieldText } from "../runtime/mod.ts";
import type { UpstreamReply } from "../upstream/mod.ts";
import { rewriteSetCookie } from "./cookie_rewrite.ts";

/** Where an `X-Accel-Redirect` sends the request. */
export type AccelTarget =
  | {
    kind: "uri";
    /** The new `$uri`, its escapes decoded. */
    uri: string;
    /** The new `$args` (empty when the field has none). */
    args: string;
  }
  | { kind: "named"; name: string }
  /**
   * A URI nginx refuses (`ngx_http_parse_unsafe_uri`): a 404, and its line
   * naming `uri` (the whole value as received, or its path decoded when
   * only that is unsafe).
   */
  | { kind: "unsafe"; uri: string };

/** What a stand-in from {@linkcode accelRedirect} stands for. */
export interface AccelRedirect {
  /** Where to. */
  target: AccelTarget;
  /**
   * The upstream's fields nginx keeps through the redirect (those with
   * `redirect` set in `ngx_http_upstream_headers_in`), lower-case names,
   * `Set-Cookie` through `proxy_cookie_domain` and `proxy_cookie_path`.
   */
  fields: [string, string][];
}

/** The fields `ngx_http_upstream_headers_in` keeps through the redirect. */
const KEPT = new Set([
  "content-type",
  "set-cookie",
  "content-disposition",
  "cache-control",
  "expires",
  "accept-ranges",
]);

const standIns = new WeakMap<Response, AccelRedirect>();

/**
 * The redirect a stand-in response stands for, if it is one.
 *
 * @param response A response the relay returned.
 * @returns The redirect, or `undefined` for a real response.
 */
export function accelRedirectOf(
  response: Response,
): AccelRedirect | undefined {
  return standIns.get(response);
}

/**
 * The stand-in for a reply carrying `X-Accel-Redirect` in a location that
 * follows it, or `null` (the reply is relayed as it is). The caller drops
 * the reply's body.
 *
 * @param reply The upstream's reply.
 * @param context The location, the request's variables and its origin.
 * @returns The stand-in, or `null`.
 */
export function accelRedirect(
  reply: UpstreamReply,
  context: { conf: LocationConf; vars: RequestVars; origin: string },
): Response | null {
  const fields = reply.head.fields;
  let value: string | undefined;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    // Most answers have no such field: the length rules out nearly all.
    if (name.length === 16 && name.toLowerCase() === "x-accel-redirect") {
      // The first one counts (ngx_http_upstream_process_header_line).
      value = fields[i]![1];
      break;
    }
  }
  if (value === undefined) return null;
  if (context.conf.proxyIgnoreHeaders.has("x-accel-redirect")) return null;
  // ngx_http_upstream_process_headers copies these through their copy
  // handlers before it reads `proxy_hide_header`'s hash: hidden or not,
  // they are kept.
  const { conf, vars } = context;
  const cookies = conf.proxyCookieDomain.length > 0 ||
    conf.proxyCookiePath.length > 0;
  const kept: [string, string][] = [];
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0].toLowerCase();
    if (!KEPT.has(name)) continue;
    let field = fields[i]![1];
    if (cookies && name === "set-cookie") {
      // ngx_http_upstream_rewrite_set_cookie, as the relay rewrites it.
      const text = rewriteSetCookie(fieldText(field), conf, vars);
      if (text !== null) field = escapeControls(fieldBytes(text));
    }
    kept.push([name, field]);
  }
  const standIn = makeResponse(null, { status: 204 });
  standIns.set(standIn, { target: accelTarget(value), fields: kept });
  return standIn;
}

/**
 * Reads an `X-Accel-Redirect` value as nginx does: `@name` is a named
 * location; a URI is checked by `ngx_http_parse_unsafe_uri` (empty,
 * starting with `?`, a NUL, or a `..` segment: refused), its escapes
 * decoded as `ngx_unescape_uri` does (a broken one loses its `%`) and
 * checked again, its arguments after `?` as they are. Segments are split
 * at `/`, and at `\` too on Windows (`ngx_path_separator`); on Linux a `\`
 * is a char of the name and a leading `.` is no segment of its own.
 *
 * @param value The field's value.
 * @param windows Use nginx for Windows' separators.
 * @returns Where to.
 *
 * @example Usage
 * ```ts
 * import { accelTarget } from "./accel_redirect.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(accelTarget("/files/a%20b?x=1"), { kind: "uri", uri: "/files/a b", args: "x=1" });
 * deepStrictEqual(accelTarget("/files/../etc"), { kind: "unsafe", uri: "/files/../etc" });
 * deepStrictEqual(accelTarget("/a\\..\\b", false), { kind: "uri", uri: "/a\\..\\b", args: "" });
 * deepStrictEqual(accelTarget("/a\\..\\b", true), { kind: "unsafe", uri: "/a\\..\\b" });
 * ```
 */
export function accelTarget(
  value: string,
  windows: boolean = Deno.build.os === "windows",
): AccelTarget {
  if (value.startsWith("@")) return { kind: "named", name: value };
  const q = value.indexOf("?");
  const raw = q < 0 ? value : value.slice(0, q);
  const args = q < 0 ? "" : value.slice(q + 1);
  const dotDot = windows ? WINDOWS_DOT_DOT : DOT_DOT;
  if (raw === "" || unsafe(raw, dotDot)) {
    return { kind: "unsafe", uri: fieldText(value) };
  }
  if (!raw.includes("%")) return { kind: "uri", uri: fieldText(raw), args };
  // The field's bytes, one char each: an escape decodes to a byte.
  const bytes = unescapeUri(raw);
  // An empty result is refused here, where nginx redirects to an empty URI.
  if (bytes === "" || unsafe(bytes, dotDot)) {
    return { kind: "unsafe", uri: fieldText(bytes) };
  }
  return { kind: "uri", uri: fieldText(bytes), args };
}

/**
 * nginx's `[error]` line for a stand-in whose URI is unsafe
 * (`ngx_http_parse_unsafe_uri` under `NGX_HTTP_LOG_UNSAFE`), written while
 * the upstream's answer is read.
 *
 * @param response A response the relay returned.
 * @returns The line's message, or `null` for any other response.
 *
 * @example Usage
 * ```ts
 * import { unsafeAccelMessage } from "./accel_redirect.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(unsafeAccelMessage(new Response("relayed")), null);
 * ```
 */
export function unsafeAccelMessage(response: Response): string | null {
  const target = standIns.get(response)?.target;
  return target?.kind === "unsafe"
    ? `unsafe URI "${target.uri}" was detected`
    : null;
}

/** A `..` segment: at the start or after a separator, up to one or the end. */
const DOT_DOT = /(?:^|\/)\.\.(?:\/|$)/;
const WINDOWS_DOT_DOT = /(?:^|[/\\])\.\.(?:[/\\]|$)/;

/** `ngx_http_parse_unsafe_uri`'s refusals of a path without its arguments. */
function unsafe(path: string, dotDot: RegExp): boolean {
  return path.includes("\0") || dotDot.test(path);
}
