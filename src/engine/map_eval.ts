/**
 * `map` and `geo` variables evaluated for a request: once per request
 * each, and a map whose value is its source's alone remembers its results
 * by source value.
 *
 * @module
 */

import type { MapConf } from "./http_model.ts";
import type { RequestVars } from "./variables.ts";
import { findWildcard } from "./hostname_keys.ts";

/**
 * A `map` variable's value for a request: exact entries, then regexes in
 * order (captures become the value's `$1`…), then `default`
 * (`ngx_http_map_find`); a `geo` variable's, its table's value for the
 * address. Evaluated once per request.
 *
 * @param name The variable.
 * @param map The compiled block.
 * @param r The request.
 * @param memo The map's memo ({@linkcode memoOf}), when already found.
 * @returns The value.
 */
export function evaluateMap(
  name: string,
  map: MapConf,
  r: RequestVars,
  memo: Map<string, MapResult> | null = memoOf(map),
): string {
  const known = r.mapValues;
  if (known !== undefined) {
    for (let i = 0; i < known.length; i += 2) {
      if (known[i] === name) return known[i + 1]!;
    }
  }
  const source = map.source.evaluate(r);
  if (map.geo !== undefined) {
    const forwarded = map.geo.forwardedFor?.evaluate(r) ?? "";
    const found = map.geo.lookup(source, forwarded);
    remember(r, name, found);
    return found;
  }
  let found = memo?.get(source);
  if (found === undefined) {
    found = lookUp(map, source, r);
    if (memo !== null) {
      if (memo.size >= MAP_MEMO_SIZE) memo.clear();
      memo.set(source, found);
    }
  } else if (typeof found !== "string") {
    // The regex matched again: its captures are the request's now.
    applyMatch(r, found);
  }
  const value = typeof found === "string" ? found : found.value;
  remember(r, name, value);
  return value;
}

/** Keeps a map's value for the rest of the request. */
function remember(r: RequestVars, name: string, value: string): void {
  if (r.mapValues === undefined) r.mapValues = [name, value];
  else r.mapValues.push(name, value);
}

/** Source values a map remembers the result of, at most (then it starts over). */
const MAP_MEMO_SIZE = 256;

/**
 * Each map whose result is its source's alone, with its results by source
 * value: the same few sources (`$uri` of the app's files, a client's
 * `Connection`) come with every request, so its regexes run once per
 * source, not per request. That is a map whose exact and default values
 * are text, and whose regex values are text and that regex's `$1`…`$9`
 * (an exact or default `$1` reads the request's own captures). `null` for
 * any other map.
 */
const memos = new WeakMap<MapConf, Map<string, MapResult> | null>();

/**
 * A map's result for a source: its value, or a regex key's match (with
 * groups) and the value made with it; the match's captures become the
 * request's, as ngx_http_regex_exec leaves them in `r->captures`.
 */
export type MapResult = string | RegexResult;

/** A regex key's result: the value, and the captures it leaves. */
interface RegexResult {
  /** The value. */
  value: string;
  /** `$0`…`$9`, unmatched groups empty. */
  captures: readonly string[];
  /** Named captures, each a variable. */
  groups: Readonly<Record<string, string>> | null;
}

/**
 * The memo of a map ({@linkcode evaluateMap}), found once per reader.
 *
 * @param map The compiled block.
 * @returns Its memo, or `null` when its value is not its source's alone.
 */
export function memoOf(map: MapConf): Map<string, MapResult> | null {
  let memo = memos.get(map);
  if (memo === undefined) {
    const pure = map.defaultValue.constant !== null &&
      [...map.exact.values()].every((v) => v.constant !== null) &&
      [...map.wildcards?.leading ?? [], ...map.wildcards?.trailing ?? []]
        .every((e) => e.value.constant !== null) &&
      map.regexes.every((e) => textAndCaptures(e.value));
    memo = pure ? new Map() : null;
    memos.set(map, memo);
  }
  return memo;
}

/** A value of text and `$1`…`$9` only. */
function textAndCaptures(
  value: { text: string; constant: string | null },
): boolean {
  return value.constant !== null || /^[^$]*(?:\$[1-9][^$]*)*$/.test(value.text);
}

/**
 * The map's value for a source (`ngx_http_map_find`): the exact keys and
 * `hostnames`' wildcards take the source in lower case, the regexes (not
 * for an empty source) as it is.
 */
function lookUp(map: MapConf, source: string, r: RequestVars): MapResult {
  if (map.wildcards !== undefined && source.endsWith(".")) {
    source = source.slice(0, -1);
  }
  const key = source.toLowerCase();
  const found = map.exact.get(key) ??
    (map.wildcards === undefined
      ? undefined
      : findWildcard(map.wildcards, key));
  if (found !== undefined) return found.evaluate(r);
  if (source === "") return map.defaultValue.evaluate(r);
  for (const entry of map.regexes) {
    const m = entry.regex.exec(source);
    if (m === null) continue;
    // A regex without groups leaves the request's captures.
    if (m.length === 1) return entry.value.evaluate(r);
    const match: RegexResult = {
      value: "",
      captures: Object.freeze(Array.from(m, (c) => c ?? "")),
      groups: m.groups === undefined ? null : Object.freeze(
        Object.fromEntries(
          Object.entries(m.groups).map(([k, v]) => [k.toLowerCase(), v ?? ""]),
        ),
      ),
    };
    applyMatch(r, match);
    match.value = entry.value.evaluate(r);
    return match;
  }
  return map.defaultValue.evaluate(r);
}

/** A regex key's captures as the request's (ngx_http_regex_exec). */
function applyMatch(r: RequestVars, match: RegexResult): void {
  r.captures = match.captures;
  if (match.groups !== null) {
    const vars = r.vars ??= new Map();
    for (const k in match.groups) vars.set(k, match.groups[k]!);
  }
}
