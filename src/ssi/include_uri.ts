/**
 * The URI an `include` names, as `ngx_http_ssi_include` makes it: a value
 * not starting with `/` is taken relative to the current URI's folder
 * (`NGX_HTTP_SSI_ADD_PREFIX`), then `ngx_http_parse_unsafe_uri` splits off
 * the arguments, decodes `%XX` and refuses a URI that climbs out (`..` as
 * a segment) or holds a NUL: the one reading of such a URI, shared with
 * `X-Accel-Redirect` (`accelTarget`).
 *
 * @module
 */

import { accelTarget } from "../proxy/mod.ts";
import { fieldBytes } from "../runtime/mod.ts";

/** The include's URI (text, as `$uri`) and arguments, or nginx's error. */
export type IncludeUri =
  | { ok: true; uri: string; args: string }
  | { ok: false; message: string };

/**
 * Makes an include's URI.
 *
 * @param value The evaluated `virtual` or `file` value (a byte string).
 * @param current `$uri` of the request being filtered.
 * @returns The URI and arguments, or the error line.
 *
 * @example Usage
 * ```ts
 * import { includeUri } from "./include_uri.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(includeUri("part.html?a=1", "/pages/x.html"), {
 *   ok: true, uri: "/pages/part.html", args: "a=1",
 * });
 * deepStrictEqual(includeUri("/a/%2e%2e/b", "/"), {
 *   ok: false, message: 'unsafe URI "/a/../b" was detected',
 * });
 * ```
 */
export function includeUri(value: string, current: string): IncludeUri {
  let text = value;
  if (!text.startsWith("/")) {
    const bytes = fieldBytes(current);
    text = bytes.slice(0, bytes.lastIndexOf("/") + 1) + text;
  }
  const target = accelTarget(text);
  if (target.kind === "uri") {
    return { ok: true, uri: target.uri, args: target.args };
  }
  const shown = target.kind === "unsafe" ? target.uri : target.name;
  return { ok: false, message: `unsafe URI "${shown}" was detected` };
}
