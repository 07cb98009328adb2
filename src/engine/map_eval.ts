/**
 * `map` and `geo` variables evaluated for a request: once per request
 * each, and a map whose value is its source's alone remembers its results
 * by source value.
 *
 * @module
 */

import type { MapConf } from "./http_model.ts";
import type { RequestVars } from "./variables.ts";

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
  memo: Map<string, string> | null = memoOf(map),
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
  let value = memo?.get(source);
  if (value === undefined) {
    value = lookUp(map, source, r);
    if (memo !== null) {
      if (memo.size >= MAP_MEMO_SIZE) memo.clear();
      memo.set(source, value);
    }
  }
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
const memos = new WeakMap<MapConf, Map<string, string> | null>();

/**
 * The memo of a map ({@linkcode evaluateMap}), found once per reader.
 *
 * @param map The compiled block.
 * @returns Its memo, or `null` when its value is not its source's alone.
 */
export function memoOf(map: MapConf): Map<string, string> | null {
  let memo = memos.get(map);
  if (memo === undefined) {
    const pure = map.defaultValue.constant !== null &&
      [...map.exact.values()].every((v) => v.constant !== null) &&
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

/** The map's value for a source (`ngx_http_map_find`). */
function lookUp(map: MapConf, source: string, r: RequestVars): string {
  const exact = map.exact.get(source);
  if (exact !== undefined) return exact.evaluate(r);
  for (const entry of map.regexes) {
    const m = entry.regex.exec(source);
    if (m === null) continue;
    const saved = r.captures;
    r.captures = [...m].map((c) => c ?? "");
    const value = entry.value.evaluate(r);
    r.captures = saved;
    return value;
  }
  return map.defaultValue.evaluate(r);
}
