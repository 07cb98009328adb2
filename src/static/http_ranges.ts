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

/**
 * Reads a `Range` header for a representation of `size` bytes.
 *
 * @param header The header value, or `null`.
 * @param size The representation's length.
 * @returns The range; `"unsatisfiable"` for 416; `null` to send it whole
 * (no header, another unit, several ranges, or a malformed value).
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
  const m = header.trim().match(/^bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== "" && Number(m[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end };
}

/**
 * Whether a request's `If-Range` still matches the representation (RFC 9110
 * §13.1.5): a strong ETag equal to the current one, or the exact
 * `Last-Modified` date. Without `If-Range` the range applies.
 *
 * @param ifRange The header, or `null`.
 * @param etag The current strong ETag.
 * @param lastModified The current `Last-Modified` value.
 * @returns Whether to honour the range.
 */
export function ifRangeMatches(
  ifRange: string | null,
  etag: string,
  lastModified: string,
): boolean {
  if (ifRange === null) return true;
  const value = ifRange.trim();
  return value.startsWith('"') ? value === etag : value === lastModified;
}
