/**
 * `ngx_http_charset_filter_module` without recoding: `charset X` adds
 * `; charset=X` to a response whose type is in `charset_types`, and
 * nothing else does.
 *
 * @module
 */

/** The settings the filter reads (a location's, merged). */
export interface CharsetConf {
  /** `charset`, or `null` (`off`, the default). */
  charset: string | null;
  /** `charset_types` (`*` for any). */
  charsetTypes: ReadonlySet<string>;
}

/**
 * The `Content-Type` to send after the charset filter. Unchanged when
 * `charset` is off, when the response has no type, when the type already
 * names a charset (nginx would recode only with a `charset_map`), for a 301
 * or 302 (`ngx_http_set_charset`: browsers once took the redirect's charset
 * for the next page), for a body with a `Content-Encoding` other than
 * `gzip_static`'s, or when the type (without parameters, lower case) is not
 * in `charset_types`.
 *
 * @param contentType The response's `Content-Type`, or `null`.
 * @param status The response's status.
 * @param conf The location's settings.
 * @param encoded The body has a `Content-Encoding` the filter must respect
 * (`false` for `gzip_static`, which sets nginx's `ignore_content_encoding`).
 * @returns The value to send, or `null` when there is none.
 *
 * @example Usage
 * ```ts
 * import { charsetFilter } from "./charset_filter.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = { charset: "utf-8", charsetTypes: new Set(["text/html"]) };
 * strictEqual(charsetFilter("text/html", 200, conf), "text/html; charset=utf-8");
 * strictEqual(charsetFilter("text/html", 301, conf), "text/html");
 * strictEqual(charsetFilter("text/css", 200, conf), "text/css");
 * strictEqual(charsetFilter("text/html", 200, { ...conf, charset: null }), "text/html");
 * ```
 */
export function charsetFilter(
  contentType: string | null,
  status: number,
  conf: CharsetConf,
  encoded = false,
): string | null {
  if (conf.charset === null || contentType === null || contentType === "") {
    return contentType;
  }
  if (status === 301 || status === 302 || encoded) return contentType;
  const semi = contentType.indexOf(";");
  if (semi >= 0 && /;\s*charset\s*=/i.test(contentType)) return contentType;
  // ngx_http_test_content_type: the type without parameters, lower case.
  const bare = (semi < 0 ? contentType : contentType.slice(0, semi)).trim()
    .toLowerCase();
  if (!conf.charsetTypes.has("*") && !conf.charsetTypes.has(bare)) {
    return contentType;
  }
  return `${contentType}; charset=${conf.charset}`;
}
