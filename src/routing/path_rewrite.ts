/**
 * Routing of a request target: which requests go to the upstream, and the
 * exact path they go to.
 *
 * `Deno.serve` builds `req.url` as `http://` + the raw `Host` header + the raw
 * request target, without normalising anything (a `Host` of `a/b` shifts the
 * path). So the target is recovered here from the raw string, and the `/api/`
 * decision is made on the percent-decoded, dot-segment-normalised path, as
 * nginx matches locations after `ngx_http_parse_complex_uri`:
 * `/api/../index.html` and `/api/..%2findex.html` are static requests. The
 * part forwarded keeps its bytes (letter case and percent encoding) when they
 * name the same segments; the query is passed verbatim.
 *
 * @module
 */

import {
  bytesToUtf8,
  decodeToBytes,
  escapeBytes,
  normalise,
} from "./path_decode.ts";

/** The public prefix whose requests are proxied. */
export const API_PREFIX = "api";

/** Where a request goes. */
export type Route =
  | {
    /** Forward to the upstream. */
    kind: "proxy";
    /** The path and query to request upstream, starting with `/`. */
    upstreamPath: string;
  }
  | {
    /** `/api` without the slash: nginx answers 301 to `/api/`. */
    kind: "redirect";
    /** The path and query to redirect to. */
    location: string;
  }
  | {
    /** Serve from the client-app folder. */
    kind: "static";
    /** The normalised path's decoded segments (never `.`, `..` or empty). */
    segments: string[];
    /** Whether the normalised path ends with `/`. */
    directory: boolean;
    /** The query with its `?`, or empty: for a folder's redirect. */
    query: string;
  }
  | {
    /** Not a valid target: nginx answers 400. */
    kind: "invalid";
    /** Why, for the log. */
    reason: string;
  };

/** Options for {@linkcode routeRequest}. */
export interface RouteOptions {
  /**
   * Match the `/api/` prefix without regard to letter case. nginx for Windows
   * does (`NGX_HAVE_CASELESS_FILESYSTEM`), nginx on Linux does not.
   *
   * @default {Deno.build.os === "windows"}
   */
  caseless?: boolean;
  /**
   * The first path segment whose requests are proxied (nginx's `location
   * /<prefix>/`).
   *
   * @default {API_PREFIX}
   */
  prefix?: string;
  /**
   * Forward the path with its prefix, as nginx's `proxy_pass` without a URI
   * part does; otherwise the prefix is replaced by `/`, as with
   * `proxy_pass http://host:port/`.
   *
   * @default {false}
   */
  keepPrefix?: boolean;
}

/** How the proxied location matches and what it forwards. */
interface ApiMatch {
  /** The prefix segment, e.g. `api`. */
  name: string;
  /** Compare it without regard to letter case. */
  caseless: boolean;
  /** Forward the URI as received (`proxy_pass` without a URI part). */
  keep: boolean;
  /** The raw path, for `keep`. */
  rawPath: string;
}

/**
 * Recovers the raw request target from the URL that `Deno.serve` gives.
 *
 * @param url `req.url`.
 * @param host The raw `Host` header, or `null`.
 * @returns The origin-form target (path and query); for an absolute-form
 * request (`GET http://other/x`) only its path and query.
 *
 * @example Usage
 * ```ts
 * import { requestTarget } from "./path_rewrite.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(requestTarget("http://localhost:8081/api/a?b", "localhost:8081"), "/api/a?b");
 * strictEqual(requestTarget("http://other/api/x", "localhost:8081"), "/api/x");
 * ```
 */
export function requestTarget(url: string, host: string | null): string {
  const schemeEnd = url.indexOf("://");
  const rest = schemeEnd < 0 ? url : url.slice(schemeEnd + 3);
  if (host !== null && host !== "" && rest.startsWith(host)) {
    const next = rest.charAt(host.length);
    if (next === "/" || next === "") return rest.slice(host.length) || "/";
  }
  // Absolute-form target, or no Host: the authority ends at the first of
  // "/", "?" or "#" (RFC 3986 §3.2).
  const end = rest.search(/[/?#]/);
  if (end < 0) return "/";
  const target = rest.slice(end);
  return target.startsWith("/") ? target : `/${target}`;
}

/** What normalisation acts on: separators, escapes, empty and dot segments. */
const CHANGED_BY_NORMALISING = /[\\%]|\/\/|\/\./;

function isDotSegment(segment: string): boolean {
  return segment === "." || segment.toLowerCase() === "%2e";
}

function isDotDotSegment(segment: string): boolean {
  return /^(?:\.|%2e){2}$/i.test(segment);
}

/**
 * Percent-decodes one path segment; `null` when it holds a malformed escape.
 *
 * @param segment The raw segment.
 * @returns The decoded segment, or `null`.
 *
 * @example Usage
 * ```ts
 * import { decodeSegment } from "./path_rewrite.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(decodeSegment("a%20b"), "a b");
 * strictEqual(decodeSegment("%zz"), null);
 * ```
 */
export function decodeSegment(segment: string): string | null {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** An escape that decodes to a separator: the segments change when decoded. */
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;

const CLIMBS = {
  kind: "invalid",
  reason: "path climbs above the root",
} as const;
const MALFORMED = {
  kind: "invalid",
  reason: "malformed percent-encoding",
} as const;
const NUL = { kind: "invalid", reason: "path holds a NUL byte" } as const;

/**
 * Decides where a request target goes.
 *
 * The decision is made on the percent-decoded path, as nginx's
 * `ngx_http_parse_complex_uri` makes it: both `/` and `\` separate segments
 * (nginx for Windows and the WHATWG URL parser both treat `\` as `/`),
 * decoded ones too (`%2f`, `%5c`); empty segments merge (`merge_slashes
 * on`); `.`, `..` and their encoded spellings are resolved. A path that
 * climbs above the root, holds `%00` or a malformed escape is invalid (nginx:
 * 400). A fragment is dropped.
 *
 * An `/api/` path is forwarded with the client's bytes when its raw segments
 * are the decoded ones; when an encoded separator made new segments, the
 * normalised path is sent re-escaped, as nginx sends it (`/api/a%2fb` goes
 * upstream as `/a/b`), so the upstream sees the path that was routed.
 *
 * @param target The raw request target, from {@linkcode requestTarget}.
 * @param options Matching options.
 * @returns The route.
 *
 * @example Usage
 * ```ts
 * import { routeRequest } from "./path_rewrite.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(routeRequest("/api/Home31/UpDateTitle?a=%20"), {
 *   kind: "proxy",
 *   upstreamPath: "/Home31/UpDateTitle?a=%20",
 * });
 * ```
 */
export function routeRequest(
  target: string,
  options: RouteOptions = {},
): Route {
  const caseless = options.caseless ?? Deno.build.os === "windows";
  const name = options.prefix ?? API_PREFIX;
  const keep = options.keepPrefix ?? false;
  const hash = target.indexOf("#");
  const noFragment = hash < 0 ? target : target.slice(0, hash);
  const q = noFragment.indexOf("?");
  const rawPath = q < 0 ? noFragment : noFragment.slice(0, q);
  const query = q < 0 ? "" : noFragment.slice(q); // keeps the "?"
  if (!rawPath.startsWith("/")) {
    return { kind: "invalid", reason: "target is not origin-form" };
  }
  // Fast path for the common `/api/` request: without "\\", "%", an empty
  // segment or a segment starting with ".", normalising changes nothing, so
  // the rest of the path is forwarded as it is (the same result as below,
  // without splitting the path; table-tested against the general path).
  const prefix = rawPath.slice(0, name.length + 2);
  if (
    (caseless ? prefix.toLowerCase() : prefix) === `/${name}/` &&
    !CHANGED_BY_NORMALISING.test(rawPath)
  ) {
    return {
      kind: "proxy",
      upstreamPath: (keep ? rawPath : rawPath.slice(name.length + 1)) + query,
    };
  }
  const api: ApiMatch = { name, caseless, keep, rawPath };
  if (rawPath.includes("%")) {
    const decoded = decodeToBytes(rawPath);
    if (decoded === null) return MALFORMED;
    if (decoded.includes("\0")) return NUL;
    if (ENCODED_SEPARATOR.test(rawPath)) {
      return routeDecoded(decoded, query, api);
    }
  }

  const raw = normalise(rawPath.split(/[/\\]/), isDotSegment, isDotDotSegment);
  if (raw === null) return CLIMBS;
  const { directory } = raw;
  const first = raw.segments[0] === undefined
    ? null
    : decodeSegment(raw.segments[0]);
  if (first !== null && isApi(first, api)) {
    return apiRoute(raw.segments.slice(1), directory, query, api);
  }

  const segments: string[] = [];
  for (const piece of raw.segments) {
    const decoded = decodeSegment(piece);
    if (decoded === null) return MALFORMED;
    segments.push(decoded);
  }
  return { kind: "static", segments, directory, query };
}

function isApi(segment: string, api: ApiMatch): boolean {
  return api.caseless
    ? segment.toLowerCase() === api.name
    : segment === api.name;
}

/** The `/api/` route for the segments after the prefix, already escaped. */
function apiRoute(
  rest: string[],
  directory: boolean,
  query: string,
  api: ApiMatch,
): Route {
  if (rest.length === 0 && !directory) {
    return { kind: "redirect", location: `/${api.name}/${query}` };
  }
  // Without a URI part nginx passes the request's URI as it was received
  // (`r->unparsed_uri` in ngx_http_proxy_create_request), dot segments,
  // double slashes and escapes included; the location matched on the
  // normalised path.
  if (api.keep) return { kind: "proxy", upstreamPath: api.rawPath + query };
  const trailing = directory && rest.length > 0 ? "/" : "";
  return {
    kind: "proxy",
    upstreamPath: `/${rest.join("/")}${trailing}${query}`,
  };
}

/** Routes a path whose decoding made new segments, on the decoded bytes. */
function routeDecoded(
  decoded: string,
  query: string,
  api: ApiMatch,
): Route {
  const path = normalise(
    decoded.split(/[/\\]/),
    (s) => s === ".",
    (s) => s === "..",
  );
  if (path === null) return CLIMBS;
  const { segments, directory } = path;
  if (segments[0] !== undefined && isApi(segments[0], api)) {
    return apiRoute(segments.slice(1).map(escapeBytes), directory, query, api);
  }
  const names: string[] = [];
  for (const segment of segments) {
    const name = bytesToUtf8(segment);
    if (name === null) return MALFORMED;
    names.push(name);
  }
  return { kind: "static", segments: names, directory, query };
}

/** A request target as nginx's phases read it. */
export type DecodedTarget =
  | {
    kind: "uri";
    /** `$uri`: decoded, dot segments resolved, slashes merged. */
    uri: string;
    /** `$args`: the query without `?`, as sent. */
    args: string;
  }
  | { kind: "invalid"; reason: string };

/**
 * Decodes a request target into `$uri` and `$args`, as
 * `ngx_http_parse_complex_uri` does (see {@linkcode routeRequest} for the
 * rules: `\` separates too, dot segments resolve, a climb above the root,
 * `%00` or a malformed escape is invalid).
 *
 * @param target The raw request target, from {@linkcode requestTarget}.
 * @returns `$uri` and `$args`, or why it is invalid.
 *
 * @example Usage
 * ```ts
 * import { decodeTarget } from "./path_rewrite.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(decodeTarget("/a/./b/../%41?x=1"), { kind: "uri", uri: "/a/A", args: "x=1" });
 * ```
 */
export function decodeTarget(target: string): DecodedTarget {
  const hash = target.indexOf("#");
  const noFragment = hash < 0 ? target : target.slice(0, hash);
  const q = noFragment.indexOf("?");
  const rawPath = q < 0 ? noFragment : noFragment.slice(0, q);
  const args = q < 0 ? "" : noFragment.slice(q + 1);
  if (!rawPath.startsWith("/")) {
    return { kind: "invalid", reason: "target is not origin-form" };
  }
  // The common path: nothing to decode or resolve.
  if (!CHANGED_BY_NORMALISING.test(rawPath)) {
    return { kind: "uri", uri: rawPath, args };
  }
  let segments: string[];
  let directory: boolean;
  if (rawPath.includes("%") && ENCODED_SEPARATOR.test(rawPath)) {
    const decoded = decodeToBytes(rawPath);
    if (decoded === null) return MALFORMED;
    if (decoded.includes("\0")) return NUL;
    const path = normalise(
      decoded.split(/[/\\]/),
      (s) => s === ".",
      (s) => s === "..",
    );
    if (path === null) return CLIMBS;
    segments = [];
    for (const segment of path.segments) {
      const name = bytesToUtf8(segment);
      if (name === null) return MALFORMED;
      segments.push(name);
    }
    directory = path.directory;
  } else {
    if (rawPath.includes("%")) {
      const decoded = decodeToBytes(rawPath);
      if (decoded === null) return MALFORMED;
      if (decoded.includes("\0")) return NUL;
    }
    const raw = normalise(
      rawPath.split(/[/\\]/),
      isDotSegment,
      isDotDotSegment,
    );
    if (raw === null) return CLIMBS;
    segments = [];
    for (const piece of raw.segments) {
      const decoded = decodeSegment(piece);
      if (decoded === null) return MALFORMED;
      segments.push(decoded);
    }
    directory = raw.directory;
  }
  const trailing = directory && segments.length > 0 ? "/" : "";
  return { kind: "uri", uri: `/${segments.join("/")}${trailing}`, args };
}
