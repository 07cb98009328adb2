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
 * `station_proxy_raw_uri` (the built-in configuration's `/api/`) is the
 * gateway's own rule beside it, {@linkcode rawUpstreamUri}: the client's
 * path after the location's prefix, normalised but with the client's own
 * escapes, as the gateway forwarded it before it ran nginx's model.
 *
 * @module
 */

import {
  escapeBytes,
  escapedSegments,
  needsNormalising,
  normaliseTarget,
  segmentText,
} from "../routing/mod.ts";

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

/** What {@linkcode rawUpstreamUri} reads of a request and its location. */
export interface RawUriInput {
  /** The URI part of `proxy_pass` (`/`, `/v1/`). */
  proxyUri: string;
  /** The location's name, one segment between slashes (`/api/`). */
  locationName: string;
  /** `$request_uri`: the target as the client sent it. */
  requestUri: string;
  /** Match the prefix without regard to letter case (nginx for Windows). */
  caseless: boolean;
}

/**
 * `station_proxy_raw_uri`: the URI part of `proxy_pass` followed by the
 * client's path after the location's prefix and its query as sent. The
 * path is normalised as the location was matched (dot segments, merged
 * slashes) but keeps the client's bytes (letter case, escapes); where an
 * escaped separator made new segments, those go re-escaped, as nginx sends
 * a normalised URI (`/api/a%2fb` goes as `/a/b`), so the upstream sees the
 * path that was routed.
 *
 * @param input The location and the client's target.
 * @returns The target to send, or `null` where the rule does not apply
 * (the location is not one segment, or the normalised path does not start
 * with it): nginx's rule applies then.
 *
 * @example Usage
 * ```ts
 * import { rawUpstreamUri } from "./upstream_uri.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const input = { proxyUri: "/", locationName: "/api/", caseless: false };
 * strictEqual(rawUpstreamUri({ ...input, requestUri: "/api/Home31/UpDateTitle?a=%20" }), "/Home31/UpDateTitle?a=%20");
 * strictEqual(rawUpstreamUri({ ...input, requestUri: "/api/x/../%7Euser" }), "/%7Euser");
 * ```
 */
export function rawUpstreamUri(input: RawUriInput): string | null {
  const { proxyUri, locationName, requestUri, caseless } = input;
  if (!isOneSegment(locationName)) return null;
  const q = queryStart(requestUri);
  const rawPath = q < 0 ? requestUri : requestUri.slice(0, q);
  // The common request: normalising would change nothing, so the rest of
  // the path goes as it is (the same result as below, without splitting).
  const prefix = rawPath.slice(0, locationName.length);
  if (
    (caseless ? prefix.toLowerCase() : prefix) === locationName &&
    !needsNormalising(rawPath)
  ) {
    return proxyUri + rawPath.slice(locationName.length) + queryOf(requestUri);
  }
  const path = normaliseTarget(requestUri);
  if (path.kind === "invalid" || path.segments.length === 0) return null;
  const first = segmentText(path.segments[0]!, path.decoded);
  const name = locationName.slice(1, -1);
  if (first === null || (caseless ? first.toLowerCase() : first) !== name) {
    return null;
  }
  if (path.segments.length === 1 && !path.directory) return null;
  return proxyUri + escapedSegments(path, 1) + path.query;
}

/** The query with its `?`, without a fragment. */
function queryOf(target: string): string {
  const hash = target.indexOf("#");
  const noFragment = hash < 0 ? target : target.slice(0, hash);
  const q = noFragment.indexOf("?");
  return q < 0 ? "" : noFragment.slice(q);
}

/**
 * `/name/`: one segment between slashes (the only location name whose
 * raw URI rule applies). A loop, not a regex: it runs for every request.
 */
function isOneSegment(name: string): boolean {
  if (name.length < 3 || name[0] !== "/" || name[name.length - 1] !== "/") {
    return false;
  }
  return name.indexOf("/", 1) === name.length - 1;
}

/** Where the query or fragment starts, or -1. */
function queryStart(target: string): number {
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 0x3f || c === 0x23) return i;
  }
  return -1;
}
