/**
 * Routing of a request target: which requests go to the upstream, and the
 * exact path they go to.
 *
 * `Deno.serve` builds `req.url` as `http://` + the raw `Host` header + the raw
 * request target, without normalising anything (a `Host` of `a/b` shifts the
 * path). So the target is recovered here from the raw string, and the `/api/`
 * decision is made on the dot-segment-normalised path, as nginx matches
 * locations after `ngx_http_parse_complex_uri`: `/api/../index.html` is a
 * static request. The part forwarded keeps its bytes (letter case and percent
 * encoding) and the query is passed verbatim.
 *
 * @module
 */

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

/**
 * Decides where a request target goes.
 *
 * Both `/` and `\` separate segments (nginx for Windows and the WHATWG URL
 * parser both treat `\` as `/`); empty segments merge (`merge_slashes on`);
 * `.`, `..` and their `%2e` spellings are resolved; a path that climbs above
 * the root is invalid (nginx: 400). A fragment is dropped.
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

  const raw: string[] = [];
  const pieces = rawPath.split(/[/\\]/);
  for (const piece of pieces) {
    if (piece === "" || isDotSegment(piece)) continue;
    if (isDotDotSegment(piece)) {
      if (raw.pop() === undefined) {
        return { kind: "invalid", reason: "path climbs above the root" };
      }
      continue;
    }
    raw.push(piece);
  }
  const last = pieces[pieces.length - 1] ?? "";
  const directory = raw.length === 0 || last === "" || isDotSegment(last) ||
    isDotDotSegment(last);

  const first = raw[0] === undefined ? null : decodeSegment(raw[0]);
  const isApi = first !== null &&
    (caseless ? first.toLowerCase() === name : first === name);
  if (isApi) {
    if (raw.length === 1 && !directory) {
      return { kind: "redirect", location: `/${name}/${query}` };
    }
    // Without a URI part nginx passes the request's URI as it was received
    // (`r->unparsed_uri` in ngx_http_proxy_create_request), dot segments,
    // double slashes and escapes included; the location matched on the
    // normalised path.
    if (keep) return { kind: "proxy", upstreamPath: rawPath + query };
    const rest = raw.slice(1).join("/");
    const trailing = directory && rest !== "" ? "/" : "";
    return { kind: "proxy", upstreamPath: `/${rest}${trailing}${query}` };
  }

  const segments: string[] = [];
  for (const piece of raw) {
    const decoded = decodeSegment(piece);
    if (decoded === null) {
      return { kind: "invalid", reason: "malformed percent-encoding" };
    }
    segments.push(decoded);
  }
  return { kind: "static", segments, directory };
}

/**
 * Joins the upstream origin and a path from {@linkcode routeRequest}, and
 * proves the result still names the upstream: whatever the client sent
 * (`//evil.example/x`, `@`, backslashes, absolute-form), the host cannot
 * change.
 *
 * @param origin The upstream origin, e.g. `http://127.0.0.1:8080`.
 * @param upstreamPath The path and query, starting with `/`.
 * @returns The URL string to request.
 * @throws {RangeError} If the joined URL would name another host (a bug
 * guard: {@linkcode routeRequest} never produces such a path).
 *
 * @example Usage
 * ```ts
 * import { upstreamUrl } from "./path_rewrite.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(upstreamUrl("http://127.0.0.1:8080", "/loginms"), "http://127.0.0.1:8080/loginms");
 * ```
 */
export function upstreamUrl(origin: string, upstreamPath: string): string {
  const url = origin + upstreamPath;
  if (!upstreamPath.startsWith("/") || upstreamPath.startsWith("//")) {
    throw new RangeError(
      `Cannot build upstream URL "${url}": path must start with a single "/"`,
    );
  }
  const parsed = new URL(url);
  if (`${parsed.protocol}//${parsed.host}` !== origin) {
    throw new RangeError(
      `Cannot build upstream URL "${url}": it names host "${parsed.host}"`,
    );
  }
  return url;
}
