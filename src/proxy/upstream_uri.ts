/**
 * The request target sent upstream for a proxied location, after nginx's
 * `ngx_http_proxy_create_request`: with a URI part in `proxy_pass` the part
 * of `$uri` the location's name matched is replaced by it; without one the
 * client's target goes as it was sent, unless the URI was changed; after a
 * `rewrite … break` the URI part is not applied. `$uri` is escaped again
 * (`ngx_escape_uri`, `NGX_ESCAPE_URI`) only when the client's path had an
 * escape or the request was rewritten or redirected internally; otherwise
 * its bytes go as they are.
 *
 * @module
 */

import { escapeBytes } from "../routing/mod.ts";

/** What {@linkcode upstreamUri} reads of a request and its location. */
export interface UpstreamUriInput {
  /**
   * The URI part of `proxy_pass` (`/`, `/v1/`), or `null` when it has none
   * (always in regex and named locations: nginx refuses one there).
   */
  proxyUri: string | null;
  /**
   * The location name whose length is replaced (`plcf->location`): the
   * matched prefix or exact location's name; an `if` block that inherits
   * `proxy_pass` inherits its location's name too.
   */
  locationName: string;
  /** `$uri`: the normalised, decoded path, as a byte string (one char per byte). */
  uri: string;
  /** `$args`, without `?`. */
  args: string;
  /** `$request_uri`: the target as the client sent it (path and query). */
  requestUri: string;
  /**
   * The URI was changed by `rewrite` or an internal redirect to a URI
   * (nginx clears `r->valid_unparsed_uri`): the client's target no longer
   * applies.
   */
  uriChanged: boolean;
  /**
   * The request was rewritten or redirected internally, named locations
   * included (`r->internal`): `$uri` is escaped again.
   */
  internal: boolean;
  /**
   * A `rewrite … break` (or `break` after a changed URI) ran in this
   * location (nginx clears `r->valid_location`): the URI part is not
   * applied and `$uri` goes whole.
   */
  locationInvalid: boolean;
}

/**
 * The path and query to request upstream.
 *
 * @param input The location's `proxy_pass` URI part and the request's state.
 * @returns The target, starting with `/` (or as the client sent it).
 *
 * @example The URI part replaces the matched prefix
 * ```ts
 * import { upstreamUri } from "./upstream_uri.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const request = {
 *   locationName: "/api/",
 *   uri: "/api/a b",
 *   args: "x=1",
 *   requestUri: "/api/a%20b?x=1",
 *   uriChanged: false,
 *   internal: false,
 *   locationInvalid: false,
 * };
 * strictEqual(upstreamUri({ ...request, proxyUri: "/" }), "/a%20b?x=1");
 * strictEqual(upstreamUri({ ...request, proxyUri: null }), "/api/a%20b?x=1");
 * ```
 */
export function upstreamUri(input: UpstreamUriInput): string {
  const { proxyUri, uri, args } = input;
  // ngx_http_proxy_create_request: no URI part and the client's target
  // still valid → r->unparsed_uri as received.
  if ((proxyUri === null || proxyUri === "") && !input.uriChanged) {
    return input.requestUri;
  }
  const replace = proxyUri !== null && proxyUri !== "" &&
    !input.locationInvalid;
  const cut = replace ? Math.min(input.locationName.length, uri.length) : 0;
  const rest = uri.slice(cut);
  const escape = input.internal || hasEscape(input.requestUri);
  let out = replace ? proxyUri! : "";
  out += escape ? escapeBytes(rest) : rest;
  return args === "" ? out : `${out}?${args}`;
}

/**
 * Whether the client's path held a `%` (nginx's `r->quoted_uri`, set by
 * the request-line parser); the query does not count.
 */
function hasEscape(requestUri: string): boolean {
  const percent = requestUri.indexOf("%");
  if (percent < 0) return false;
  const q = requestUri.indexOf("?");
  return q < 0 || percent < q;
}
