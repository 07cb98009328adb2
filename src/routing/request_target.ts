/**
 * The request target as nginx reads it: recovered from `Deno.serve`'s URL
 * (`requestTarget`), then decoded into `$uri` and `$args` as
 * `ngx_http_parse_complex_uri` does (`decodeTarget`). `normaliseTarget` is
 * the one normalisation both that and `station_proxy_raw_uri`
 * (`proxy/upstream_uri.ts`) read: the segments with dot segments resolved
 * and slashes merged, still as the client escaped them.
 *
 * `Deno.serve` builds `req.url` as `http://` + the raw `Host` header + the
 * raw request target, without normalising anything (a `Host` of `a/b`
 * shifts the path), so the target is recovered from the raw string.
 *
 * @module
 */

import { fieldText } from "../runtime/mod.ts";
import { decodeToBytes, escapeBytes, normalise } from "./path_decode.ts";

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
 * import { requestTarget } from "./request_target.ts";
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

/**
 * Whether normalising a raw path (no query) could change it: without `\\`,
 * `%`, an empty segment or a segment starting with `.` it is already
 * `$uri`, and the common request skips the work.
 *
 * @param rawPath The path as sent, without its query.
 * @returns `false` when the path is already normal.
 */
export function needsNormalising(rawPath: string): boolean {
  return CHANGED_BY_NORMALISING.test(rawPath);
}

function isDotSegment(segment: string): boolean {
  return segment === "." || segment.toLowerCase() === "%2e";
}

function isDotDotSegment(segment: string): boolean {
  return /^(?:\.|%2e){2}$/i.test(segment);
}

/**
 * Percent-decodes one raw segment to the text `$uri` holds (bytes that are
 * not UTF-8 kept, `fieldText`); `null` when it holds a
 * malformed escape.
 */
function decodeSegment(segment: string): string | null {
  if (!segment.includes("%")) return segment;
  const bytes = decodeToBytes(segment);
  return bytes === null ? null : fieldText(bytes);
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
const NOT_ORIGIN_FORM = {
  kind: "invalid",
  reason: "target is not origin-form",
} as const;

/** Why a target cannot be read. */
export type InvalidTarget = { kind: "invalid"; reason: string };

/** A target's path, normalised, with its segments as the client wrote them. */
export interface NormalisedTarget {
  kind: "path";
  /**
   * The segments (never empty, `.` or `..`): as raw text the client sent
   * (`escaped`), or, when an escaped separator made new segments, the
   * decoded bytes (one char per byte) of the segments it made.
   */
  segments: string[];
  /** The segments are decoded bytes, not the client's raw text. */
  decoded: boolean;
  /** The path names a folder (ends with `/`, `.` or `..`, or is the root). */
  directory: boolean;
  /** The query with its `?`, or empty; a fragment is dropped. */
  query: string;
}

/**
 * Normalises a request target's path as `ngx_http_parse_complex_uri`
 * does: both `/` and `\` separate segments (nginx for Windows and the
 * WHATWG URL parser both treat `\` as `/`), decoded ones too (`%2f`,
 * `%5c`); empty segments merge (`merge_slashes on`); `.`, `..` and their
 * encoded spellings are resolved. A path that climbs above the root, holds
 * `%00` or a malformed escape is invalid (nginx: 400).
 *
 * @param target The raw request target, from {@linkcode requestTarget}.
 * @returns The segments, or why the target is invalid.
 *
 * @example Usage
 * ```ts
 * import { normaliseTarget } from "./request_target.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(normaliseTarget("//a/./b%20c/../d/?x"), {
 *   kind: "path",
 *   segments: ["a", "d"],
 *   decoded: false,
 *   directory: true,
 *   query: "?x",
 * });
 * ```
 */
export function normaliseTarget(
  target: string,
): NormalisedTarget | InvalidTarget {
  const hash = target.indexOf("#");
  const noFragment = hash < 0 ? target : target.slice(0, hash);
  const q = noFragment.indexOf("?");
  const rawPath = q < 0 ? noFragment : noFragment.slice(0, q);
  const query = q < 0 ? "" : noFragment.slice(q);
  if (!rawPath.startsWith("/")) return NOT_ORIGIN_FORM;
  if (rawPath.includes("%")) {
    const bytes = decodeToBytes(rawPath);
    if (bytes === null) return MALFORMED;
    if (bytes.includes("\0")) return NUL;
    if (ENCODED_SEPARATOR.test(rawPath)) {
      const path = normalise(
        bytes.split(/[/\\]/),
        (s) => s === ".",
        (s) => s === "..",
      );
      if (path === null) return CLIMBS;
      return { kind: "path", ...path, decoded: true, query };
    }
  }
  const raw = normalise(rawPath.split(/[/\\]/), isDotSegment, isDotDotSegment);
  if (raw === null) return CLIMBS;
  return { kind: "path", ...raw, decoded: false, query };
}

/**
 * The path of a {@linkcode NormalisedTarget} escaped as nginx sends a
 * normalised URI upstream: the client's raw segments as they were, decoded
 * ones escaped again (`ngx_escape_uri`).
 *
 * @param path The normalised target.
 * @param from The first segment to take.
 * @returns The segments joined with `/` (no leading `/`; a trailing `/` for
 * a folder with segments).
 */
export function escapedSegments(path: NormalisedTarget, from = 0): string {
  const rest = path.segments.slice(from);
  const trailing = path.directory && rest.length > 0 ? "/" : "";
  return (path.decoded ? rest.map(escapeSegment) : rest)
    .join("/") + trailing;
}

/**
 * Percent-decodes one raw segment or reads decoded bytes as UTF-8: the
 * name `$uri` holds; `null` when it cannot be.
 *
 * @param segment A segment of a {@linkcode NormalisedTarget}.
 * @param decoded Whether it is decoded bytes.
 * @returns The segment as text, or `null`.
 */
export function segmentText(segment: string, decoded: boolean): string | null {
  return decoded ? fieldText(segment) : decodeSegment(segment);
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
  | InvalidTarget;

/**
 * Decodes a request target into `$uri` and `$args`, as
 * `ngx_http_parse_complex_uri` does (see {@linkcode normaliseTarget} for
 * the rules).
 *
 * @param target The raw request target, from {@linkcode requestTarget}.
 * @returns `$uri` and `$args`, or why it is invalid.
 *
 * @example Usage
 * ```ts
 * import { decodeTarget } from "./request_target.ts";
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
  if (!rawPath.startsWith("/")) return NOT_ORIGIN_FORM;
  // The common path: nothing to decode or resolve.
  if (!needsNormalising(rawPath)) {
    return { kind: "uri", uri: rawPath, args };
  }
  const path = normaliseTarget(rawPath);
  if (path.kind === "invalid") return path;
  const segments: string[] = [];
  for (const segment of path.segments) {
    const text = segmentText(segment, path.decoded);
    if (text === null) return MALFORMED;
    segments.push(text);
  }
  const trailing = path.directory && segments.length > 0 ? "/" : "";
  return { kind: "uri", uri: `/${segments.join("/")}${trailing}`, args };
}

/** One path segment escaped as nginx sends it (a closure made once). */
const escapeSegment = (segment: string): string => escapeBytes(segment);
