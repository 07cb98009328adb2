/**
 * nginx's location search (`ngx_http_core_find_location`): an `=` location
 * that equals the URI wins at once; else the longest prefix is remembered
 * and its nested locations searched; then, unless that prefix was `^~`, the
 * regex locations of the level in file order, the first match winning; else
 * the remembered prefix. A prefix location with `proxy_pass` whose name ends
 * in `/` also answers the name without the slash with a 301
 * (`auto_redirect`).
 *
 * Prefixes are a list sorted longest first: the first that matches is the
 * longest, and a station's few dozen cost less than one regex test each.
 *
 * @module
 */

import type { LocationConf, LocationIndex } from "./model.ts";

/** What the search found. */
export type LocationFound =
  | {
    kind: "location";
    /** The location. */
    conf: LocationConf;
    /** The captures of a regex location, else `null`. */
    captures: RegExpExecArray | null;
  }
  | {
    /** The URI is a proxied prefix location's name without its slash. */
    kind: "redirect";
    /** The location. */
    conf: LocationConf;
  }
  | { kind: "none" };

/**
 * Indexes one level's locations.
 *
 * @param locations The level's locations in file order (no `@name` ones).
 * @param caseless Compare without regard to case (nginx for Windows).
 * @returns The index.
 *
 * @example Usage
 * ```ts
 * import { indexLocations } from "./locations.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(indexLocations([], false).prefixes.length, 0);
 * ```
 */
export function indexLocations(
  locations: readonly LocationConf[],
  caseless: boolean,
): LocationIndex {
  const exact = new Map<string, LocationConf>();
  const prefixes: LocationConf[] = [];
  const regexes: LocationConf[] = [];
  for (const loc of locations) {
    if (loc.match === "exact") {
      exact.set(caseless ? loc.name.toLowerCase() : loc.name, loc);
    } else if (loc.match === "prefix" || loc.match === "prefix-no-regex") {
      prefixes.push(loc);
    } else if (loc.match === "regex" || loc.match === "regex-caseless") {
      regexes.push(loc);
    }
  }
  // Stable: equal names keep file order (nginx refuses duplicates anyway).
  prefixes.sort((a, b) => b.name.length - a.name.length);
  const regexEndings = regexes.map((loc) => {
    const endings = fileEndings(loc.name);
    if (endings === null) return null;
    return new Set(
      caseless || loc.match === "regex-caseless"
        ? endings.map((e) => e.toLowerCase())
        : endings,
    );
  });
  return regexEndings.some((e) => e !== null)
    ? { exact, prefixes, regexes, regexEndings }
    : { exact, prefixes, regexes };
}

/**
 * The endings a regex of the shape station files write for file types
 * (`\.(gif|jpg|png)$`, `.*\.js$`, `^.+\.(?:css|js)$`) requires of a URI:
 * it matches only a URI ending in `.` and one of them, so a URI ending in
 * none of them is no match without running it. `null` for any other shape.
 *
 * @param source The regex as written.
 * @returns The endings, or `null`.
 *
 * @example Usage
 * ```ts
 * import { fileEndings } from "./locations.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(fileEndings("\\.(gif|jpg)$"), ["gif", "jpg"]);
 * deepStrictEqual(fileEndings("^/api/"), null);
 * ```
 */
export function fileEndings(source: string): string[] | null {
  const m = ENDINGS.exec(source);
  if (m === null) return null;
  return (m[1] ?? m[2]!).split("|");
}

/**
 * An optional `.*`, `.+`, `^.*` or `^.+`, then `\.`, then one name or a
 * group of names of letters, digits, `_` and `-`, then the end (`$`).
 */
const ENDINGS =
  /^(?:\^?\.[*+])?\\\.(?:\((?:\?:)?([\w-]+(?:\|[\w-]+)*)\)|([\w-]+))\$$/;

/**
 * What follows a URI's last `.`, or `/` (an ending no regex of
 * {@linkcode fileEndings}' shape takes) when it has none. A final newline
 * (`%0A`) is left out: PCRE2's `$` matches before it.
 */
function uriEnding(uri: string): string {
  const dot = uri.lastIndexOf(".");
  if (dot < 0) return "/";
  return uri.charCodeAt(uri.length - 1) === 0x0a
    ? uri.slice(dot + 1, -1)
    : uri.slice(dot + 1);
}

/** Whether a location answers its name without the slash with a 301. */
function autoRedirects(loc: LocationConf): boolean {
  return (loc.proxyPass !== null || loc.fastcgi !== undefined) &&
    loc.name.endsWith("/");
}

const NONE: LocationFound = Object.freeze({ kind: "none" });

/**
 * The search's answer for a location found without captures, made once
 * per location: an object per request was garbage per request.
 */
const plainFound = new WeakMap<LocationConf, LocationFound>();

function foundPlain(conf: LocationConf): LocationFound {
  let found = plainFound.get(conf);
  if (found === undefined) {
    found = Object.freeze({ kind: "location", conf, captures: null });
    plainFound.set(conf, found);
  }
  return found;
}

/**
 * Finds the location for a URI.
 *
 * @param index The level to search.
 * @param uri The normalised, decoded path.
 * @param caseless Compare without regard to case.
 * @returns The location, a slash redirect, or none.
 *
 * @example Usage
 * ```ts
 * import { findLocation, indexLocations } from "./locations.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const found = findLocation(indexLocations([], false), "/x", false);
 * strictEqual(found.kind, "none");
 * ```
 */
export function findLocation(
  index: LocationIndex,
  uri: string,
  caseless: boolean,
): LocationFound {
  const key = caseless ? uri.toLowerCase() : uri;
  const exact = index.exact.get(key);
  if (exact !== undefined) return foundPlain(exact);
  let found: LocationFound = NONE;
  let noRegex = false;
  // A longer proxied location named the URI and a slash: its 301, unless
  // a location names the URI whole. nginx's tree answers such a URI at
  // that location's node, before it reaches the longer names below it
  // (ngx_http_core_find_static_location: `len == node->len` returns); a
  // shorter match met on the way loses to the redirect.
  let redirect: LocationConf | null = null;
  for (const loc of index.prefixes) {
    const name = caseless ? loc.name.toLowerCase() : loc.name;
    if (key.startsWith(name)) {
      if (redirect !== null && name.length !== key.length) {
        return { kind: "redirect", conf: redirect };
      }
      found = foundPlain(loc);
      noRegex = loc.match === "prefix-no-regex";
      if (
        loc.locations.prefixes.length + loc.locations.regexes.length +
            loc.locations.exact.size > 0
      ) {
        const inner = findLocation(loc.locations, uri, caseless);
        // A nested regex or exact match is final; a nested prefix is kept
        // unless a regex of this level matches.
        if (inner.kind === "redirect") return inner;
        if (inner.kind === "location") {
          if (inner.captures !== null || inner.conf.match === "exact") {
            return inner;
          }
          found = inner;
          noRegex ||= inner.conf.match === "prefix-no-regex";
        }
      }
      break;
    }
    // `key + "/" === name`, without the copy per request.
    if (
      redirect === null && autoRedirects(loc) &&
      name.length === key.length + 1 && name.startsWith(key)
    ) {
      redirect = loc;
    }
  }
  if (redirect !== null && found === NONE) {
    return { kind: "redirect", conf: redirect };
  }
  if (!noRegex) {
    const { regexes, regexEndings } = index;
    let ending: string | undefined;
    let lower: string | undefined;
    for (let i = 0; i < regexes.length; i++) {
      const loc = regexes[i]!;
      const endings = regexEndings?.[i];
      if (endings !== undefined && endings !== null) {
        ending ??= uriEnding(uri);
        const key = caseless || loc.match === "regex-caseless"
          ? (lower ??= ending.toLowerCase())
          : ending;
        if (!endings.has(key)) continue;
      }
      const m = loc.regex!.exec(uri);
      if (m === null) continue;
      if (
        loc.locations.prefixes.length + loc.locations.regexes.length +
            loc.locations.exact.size > 0
      ) {
        const inner = findLocation(loc.locations, uri, caseless);
        if (inner.kind === "location") return inner;
      }
      return { kind: "location", conf: loc, captures: m };
    }
  }
  return found;
}
