/**
 * Single byte ranges (RFC 9110 §14): what a `Range` header asks of a
 * representation of known size. Several ranges are answered with the whole
 * representation (200), which RFC 9110 §14.2 allows.
 *
 * @module
 */

/** A satisfiable range, inclusive. */
export interface ByteRange {
  /** First byte. */
  start: number;
  /** Last byte. */
  end: number;
}

/** The largest `off_t` nginx accepts in a range (NGX_MAX_OFF_T_VALUE). */
const MAX_OFF_T = 2n ** 63n - 1n;

/**
 * Reads a `Range` header for a representation of `size` bytes, exactly as
 * nginx's ngx_http_range_parse() does: a value not starting with `bytes=`
 * (case-insensitive, nothing between) is ignored, any other syntax error or a
 * number past `off_t` is 416, an empty range is skipped unless it starts at 0
 * (then the whole representation is sent).
 *
 * @param header The header value, or `null`.
 * @param size The representation's length.
 * @returns The range; `"unsatisfiable"` for 416; `null` to send it whole
 * (no header, another unit, several ranges, or a range from 0 that is empty).
 *
 * @example Usage
 * ```ts
 * import { parseRange } from "./http_ranges.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseRange("bytes=0-99", 1000), { start: 0, end: 99 });
 * deepStrictEqual(parseRange("bytes=-100", 1000), { start: 900, end: 999 });
 * deepStrictEqual(parseRange("bytes=1000-", 1000), "unsatisfiable");
 * ```
 */
export function parseRange(
  header: string | null,
  size: number,
): ByteRange | "unsatisfiable" | null {
  if (header === null) return null;
  // nginx's header parser strips surrounding whitespace, then wants 7+ bytes.
  const value = header.trim();
  if (value.length < 7 || value.slice(0, 6).toLowerCase() !== "bytes=") {
    return null;
  }
  const ranges = scanRanges(value.slice(6), size);
  if (ranges === "unsatisfiable" || ranges === null) return ranges;
  if (ranges.length === 0) return "unsatisfiable";
  // Several ranges would be multipart/byteranges, which the gateway does not
  // build; RFC 9110 §14.2 allows the whole representation instead.
  return ranges.length === 1 ? ranges[0]! : null;
}

/** ngx_http_range_parse()'s loop; `null` for its NGX_DECLINED. */
function scanRanges(
  spec: string,
  size: number,
): ByteRange[] | "unsatisfiable" | null {
  const ranges: ByteRange[] = [];
  let i = 0;
  const spaces = () => {
    while (spec[i] === " ") i++;
  };
  const digits = (): number | null => {
    const from = i;
    while (/[0-9]/.test(spec[i] ?? "")) i++;
    const text = spec.slice(from, i);
    if (text === "" || BigInt(text) > MAX_OFF_T) return null;
    return Number(text);
  };
  let total = 0;
  for (;;) {
    let start: number;
    let end: number;
    spaces();
    if (spec[i] !== "-") {
      const first = digits();
      if (first === null) return "unsatisfiable";
      start = first;
      spaces();
      if (spec[i++] !== "-") return "unsatisfiable";
      spaces();
      if (spec[i] === "," || i >= spec.length) {
        end = size;
      } else {
        const last = digits();
        if (last === null) return "unsatisfiable";
        end = closeRange(last, spec, i, size);
        if (end < 0) return "unsatisfiable";
        spaces();
      }
    } else {
      i++;
      const suffix = digits();
      if (suffix === null) return "unsatisfiable";
      start = suffix < size ? size - suffix : 0;
      end = size;
      spaces();
      if (spec[i] !== "," && i < spec.length) return "unsatisfiable";
    }
    if (start < end) {
      ranges.push({ start, end: end - 1 });
      total += end - start;
    } else if (start === 0) {
      return null;
    }
    if (spec[i++] !== ",") break;
  }
  // Overlapping ranges adding up past the whole are sent whole by nginx.
  return total > size ? null : ranges;
}

/** The exclusive end of `first-last`, or -1 when junk follows it. */
function closeRange(
  last: number,
  spec: string,
  at: number,
  size: number,
): number {
  let i = at;
  while (spec[i] === " ") i++;
  if (spec[i] !== "," && i < spec.length) return -1;
  return last >= size ? size : last + 1;
}

/**
 * Whether a request's `If-Range` still matches the representation (RFC 9110
 * §13.1.5): a strong ETag equal to the current one, or the exact
 * `Last-Modified` date. Without `If-Range` the range applies.
 *
 * @param ifRange The header, or `null`.
 * @param etag The current strong ETag, or `null` when none is sent (an
 * ETag in `If-Range` then never matches).
 * @param lastModified The current `Last-Modified` value.
 * @returns Whether to honour the range.
 */
export function ifRangeMatches(
  ifRange: string | null,
  etag: string | null,
  lastModified: string,
): boolean {
  if (ifRange === null) return true;
  const value = ifRange.trim();
  return value.startsWith('"') ? value === etag : value === lastModified;
}
