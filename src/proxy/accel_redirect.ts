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

import type { LocationConf, RequestVars } from "../engine/mod.ts";
import { decodeToBytes } from "../routing/mod.ts";
import { fieldText } from "../runtime/mod.ts";
import type { UpstreamReply } from "../upstream/mod.ts";
import { locationResponseFields } from "./response_fields.ts";

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
  /** A URI nginx refuses (`ngx_http_parse_unsafe_uri`): a 404. */
  | { kind: "unsafe" };

/** What a stand-in from {@linkcode accelRedirect} stands for. */
export interface AccelRedirect {
  /** Where to. */
  target: AccelTarget;
  /**
   * The upstream's fields nginx keeps through the redirect (those with
   * `redirect` set in `ngx_http_upstream_headers_in`), as relayed.
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
  const kept = locationResponseFields(
    fields.filter(([name]) => KEPT.has(name.toLowerCase())),
    { ...context, contentLength: null },
  );
  const standIn = new Response(null, { status: 204 });
  standIns.set(standIn, { target: accelTarget(value), fields: kept });
  return standIn;
}

/**
 * Reads an `X-Accel-Redirect` value as nginx does: `@name` is a named
 * location; a URI is checked by `ngx_http_parse_unsafe_uri` (empty, or
 * starting with `?` or `.`, a NUL, a `..` segment: refused) with its
 * escapes decoded and checked again, its arguments after `?` as they are.
 *
 * @param value The field's value.
 * @returns Where to.
 *
 * @example Usage
 * ```ts
 * import { accelTarget } from "./accel_redirect.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(accelTarget("/files/a%20b?x=1"), { kind: "uri", uri: "/files/a b", args: "x=1" });
 * deepStrictEqual(accelTarget("/files/../etc"), { kind: "unsafe" });
 * ```
 */
export function accelTarget(value: string): AccelTarget {
  if (value.startsWith("@")) return { kind: "named", name: value };
  const q = value.indexOf("?");
  const raw = q < 0 ? value : value.slice(0, q);
  const args = q < 0 ? "" : value.slice(q + 1);
  if (unsafe(raw)) return { kind: "unsafe" };
  if (!raw.includes("%")) return { kind: "uri", uri: fieldText(raw), args };
  const bytes = decodeToBytes(fieldText(raw));
  if (bytes === null || unsafe(bytes)) return { kind: "unsafe" };
  return { kind: "uri", uri: fieldText(bytes), args };
}

/** `ngx_http_parse_unsafe_uri`'s refusals, on a path without its arguments. */
function unsafe(path: string): boolean {
  if (path === "" || path.startsWith(".") || path.includes("\0")) return true;
  // A `..` segment: `/../`, or `/..` at the end (`\` separates on Windows).
  return /[/\\]\.\.(?:[/\\]|$)/.test(path);
}
