/**
 * `Accept-Encoding` and `Accept` decisions for static files, and the
 * `Cache-Control` policy.
 *
 * @module
 */

/**
 * Whether a client accepts a content coding (RFC 9110 §12.5.3): listed (or
 * `*`) with a non-zero quality.
 *
 * @param header The `Accept-Encoding` value, or `null`.
 * @param coding e.g. `br`.
 * @returns Whether it is acceptable.
 *
 * @example Usage
 * ```ts
 * import { acceptsEncoding } from "./content_negotiation.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(acceptsEncoding("gzip, deflate, br, zstd", "br"), true);
 * strictEqual(acceptsEncoding("gzip;q=0, *", "gzip"), false);
 * ```
 */
export function acceptsEncoding(
  header: string | null,
  coding: string,
): boolean {
  if (header === null) return false;
  let star: number | null = null;
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim().match(/^q=([\d.]+)$/)?.[1]).find((v) =>
      v !== undefined
    );
    const quality = q === undefined ? 1 : Number(q);
    if (name.trim() === coding) return quality > 0;
    if (name.trim() === "*") star = quality;
  }
  return star !== null && star > 0;
}

/**
 * Whether a missing path looks like a route of the single-page app (it gets
 * `index.html`) rather than a missing asset (it gets 404): no file extension
 * in the last segment, or a browser navigation asking for HTML.
 *
 * @param segments The path's segments.
 * @param accept The `Accept` header, or `null`.
 * @returns Whether to answer with the app's `index.html`.
 *
 * @example Usage
 * ```ts
 * import { looksLikeAppRoute } from "./content_negotiation.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(looksLikeAppRoute(["orders", "42"], "*\/*"), true);
 * strictEqual(looksLikeAppRoute(["assets", "app.js"], "*\/*"), false);
 * strictEqual(looksLikeAppRoute(["report.v2"], "text/html,application/xhtml+xml"), true);
 * ```
 */
export function looksLikeAppRoute(
  segments: readonly string[],
  accept: string | null,
): boolean {
  const last = segments.at(-1) ?? "";
  if (!last.includes(".")) return true;
  return accept !== null && /(^|,)\s*text\/html\b/i.test(accept);
}

/** `Cache-Control` values for the three kinds of static file. */
export interface CachePolicy {
  /** HTML documents, e.g. `index.html`: revalidated every time. */
  html: string;
  /** Fingerprinted assets (`app.3f9a2c1b.js`): safe to cache for long. */
  fingerprinted: string;
  /** Everything else. */
  other: string;
}

/** The default policy. */
export const DEFAULT_CACHE_POLICY: CachePolicy = {
  html: "no-cache",
  fingerprinted: "public, max-age=31536000, immutable",
  other: "no-cache",
};

/**
 * The `Cache-Control` value for a file name. A name is fingerprinted when a
 * segment of 8 or more hex or base64url characters with at least one digit
 * stands between dots or after a dash before the extension, as bundlers
 * (Vite, webpack, esbuild) write them: `index-BQ3x9f2a.js`,
 * `app.3f9a2c1b.css`.
 *
 * @param name The file name.
 * @param policy The values.
 * @returns The header value.
 *
 * @example Usage
 * ```ts
 * import { cacheControlFor, DEFAULT_CACHE_POLICY } from "./content_negotiation.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(cacheControlFor("index-BQ3x9f2a.js", DEFAULT_CACHE_POLICY), "public, max-age=31536000, immutable");
 * strictEqual(cacheControlFor("index.html", DEFAULT_CACHE_POLICY), "no-cache");
 * ```
 */
export function cacheControlFor(name: string, policy: CachePolicy): string {
  if (/\.html?$/i.test(name)) return policy.html;
  const stem = name.replace(/\.[^.]+$/, "");
  const m = stem.match(/[.-]([A-Za-z0-9_]{8,})$/);
  if (m?.[1] && /\d/.test(m[1])) return policy.fingerprinted;
  return policy.other;
}
