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
 * `charset` is off, when the response has no type, when the type has
 * parameters (a charset of its own, or any other: nginx then tests the
 * whole value against `charset_types` and appends nothing), for a 301 or
 * 302 (`ngx_http_set_charset`: browsers once took the redirect's charset
 * for the next page), or when the type (lower case) is not in
 * `charset_types`. Without `source_charset` nginx recodes nothing, so an
 * encoded body gets the charset too.
 *
 * @param contentType The response's `Content-Type`, or `null`.
 * @param status The response's status.
 * @param conf The location's settings.
 * @returns The value to send, or `null` when there is none.
 *
 * @example Usage
 * ```ts
 * import { charsetFilter } from "./charset_filter.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = { charset: "utf-8", charsetTypes: new Set(["text/html"]) };
 * strictEqual(charsetFilter("text/html", 200, conf), "text/html; charset=utf-8");
 * strictEqual(charsetFilter("text/html; charset=gbk", 200, conf), "text/html; charset=gbk");
 * strictEqual(charsetFilter("text/html", 301, conf), "text/html");
 * strictEqual(charsetFilter("text/css", 200, conf), "text/css");
 * strictEqual(charsetFilter("text/html", 200, { ...conf, charset: null }), "text/html");
 * ```
 */
export function charsetFilter(
  contentType: string | null,
  status: number,
  conf: CharsetConf,
): string | null {
  if (conf.charset === null || contentType === null || contentType === "") {
    return contentType;
  }
  if (status === 301 || status === 302 || contentType.includes(";")) {
    return contentType;
  }
  // ngx_http_test_content_type: the type, lower case.
  const type = contentType.trim().toLowerCase();
  if (!conf.charsetTypes.has("*") && !conf.charsetTypes.has(type)) {
    return contentType;
  }
  return `${contentType}; charset=${conf.charset}`;
}
