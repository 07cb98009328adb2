/**
 * The IPv4 ranges of a `geo` block in `ranges` mode
 * (`ngx_http_geo_add_range`): a range as written and as nginx's messages
 * show it, and nested ranges made disjoint for the lookup.
 *
 * @module
 */

import { parseIpv4 } from "./address.ts";

/** One IPv4 range of `ranges` mode, inclusive. */
export interface Range {
  /** The first address, as a number. */
  start: number;
  /** The last address, as a number. */
  end: number;
  /** The range's value. */
  value: string;
}

/**
 * A range as written: `a.b.c.d-e.f.g.h`, the first not after the last.
 *
 * @param text The range.
 * @returns Its ends, or `null`.
 */
export function parseRange(
  text: string,
): { start: number; end: number } | null {
  const dash = text.indexOf("-");
  if (dash < 0) return null;
  const start = parseIpv4(text.slice(0, dash));
  const end = parseIpv4(text.slice(dash + 1));
  if (start === null || end === null || start > end) return null;
  return { start, end };
}

/**
 * A range as nginx's messages show it.
 *
 * @param r The range.
 * @returns `a.b.c.d-e.f.g.h`.
 */
export function rangeText(r: Range): string {
  const dotted = (n: number) =>
    [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join(".");
  return `${dotted(r.start)}-${dotted(r.end)}`;
}

/**
 * Nested ranges as disjoint ones, the inner range's value winning inside
 * it: ranges sorted by start (an outer one first), cut where an inner one
 * begins and resumed after it ends.
 *
 * @param ranges The ranges in the order added.
 * @returns Disjoint ranges, by start.
 */
export function flatten(ranges: readonly Range[]): Range[] {
  const sorted = ranges.map((r, i) => ({ ...r, i })).sort((a, b) =>
    a.start - b.start || b.end - a.end || a.i - b.i
  );
  const out: Range[] = [];
  const open: (Range & { i: number })[] = [];
  let at = 0;
  const emit = (start: number, end: number, value: string) => {
    if (start <= end) out.push({ start, end, value });
  };
  const closeUntil = (limit: number) => {
    // Ends the open ranges that end before `limit`, innermost first.
    while (open.length > 0 && open.at(-1)!.end < limit) {
      const r = open.pop()!;
      emit(at, r.end, r.value);
      at = r.end + 1;
    }
  };
  for (const r of sorted) {
    closeUntil(r.start);
    const outer = open.at(-1);
    if (outer !== undefined) emit(at, r.start - 1, outer.value);
    at = r.start;
    open.push(r);
  }
  closeUntil(Infinity);
  return out;
}
