/**
 * Media types as nginx chooses them: `types {}` (usually `include
 * mime.types`) maps extensions to types, `default_type` covers the rest
 * (`ngx_http_set_content_type`), and `charset` adds `; charset=…` to the
 * types in `charset_types` only (`ngx_http_charset_filter_module`).
 *
 * @module
 */

import { type CharsetConf, charsetFilter } from "../response/mod.ts";

/** One directive of a `types {}` block: the type, then its extensions. */
export interface TypesDirective {
  /** The media type, as written (`text/html`). */
  name: string;
  /** Its extensions (`html`, `htm`, `shtml`). */
  args: readonly string[];
}

/** What {@linkcode typesFromDirectives} built. */
export interface TypesTable {
  /** Extension (lower case) → media type. */
  types: Map<string, string>;
  /**
   * nginx's `[warn]` messages for an extension given twice (the later type
   * wins), without their ` in FILE:LINE`.
   */
  warnings: string[];
}

/**
 * nginx's types when no level has a `types {}` block
 * (`ngx_http_core_default_types`).
 */
export const NGINX_DEFAULT_TYPES: ReadonlyMap<string, string> = new Map([
  ["html", "text/html"],
  ["gif", "image/gif"],
  ["jpg", "image/jpeg"],
]);

/** nginx's `default_type` when none is set (`ngx_http_core_merge_loc_conf`). */
export const NGINX_DEFAULT_TYPE = "text/plain";

/**
 * nginx's `charset_types` when none is set
 * (`ngx_http_charset_default_types`).
 */
export const NGINX_CHARSET_TYPES: ReadonlySet<string> = new Set([
  "text/html",
  "text/xml",
  "text/plain",
  "text/vnd.wap.wml",
  "application/javascript",
  "application/rss+xml",
]);

/**
 * Builds the extension map of a `types {}` block as `ngx_http_core_type`
 * does: each directive's name is a media type, its arguments extensions,
 * lower-cased; an extension given again takes the later type, with nginx's
 * warning. A level's later block adds to the map its earlier ones built
 * (`base`): nginx keeps one table per level (`ngx_http_core_types`), so
 * `types { application/javascript mjs; }` after `include mime.types` adds
 * `.mjs` and keeps the rest.
 *
 * @param directives The block's directives in order (`include` resolved).
 * @param base The map the level's earlier blocks built, if any (not changed).
 * @returns The map and the warnings.
 *
 * @example Usage
 * ```ts
 * import { typesFromDirectives } from "./nginx_types.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const { types } = typesFromDirectives([
 *   { name: "text/html", args: ["html", "HTM"] },
 *   { name: "application/javascript", args: ["js"] },
 * ]);
 * strictEqual(types.get("htm"), "text/html");
 * strictEqual(types.get("js"), "application/javascript");
 * ```
 */
export function typesFromDirectives(
  directives: readonly TypesDirective[],
  base?: ReadonlyMap<string, string>,
): TypesTable {
  const types = new Map<string, string>(base);
  const warnings: string[] = [];
  for (const { name, args } of directives) {
    for (const arg of args) {
      const ext = arg.toLowerCase();
      const previous = types.get(ext);
      if (previous !== undefined) {
        warnings.push(
          `duplicate extension "${ext}", content type: "${name}", previous content type: "${previous}"`,
        );
      }
      types.set(ext, name);
    }
  }
  return { types, warnings };
}

/**
 * The extension of a URI as `ngx_http_set_exten` finds it: after the last
 * `.` of the last segment, unless that dot starts the segment (`/.env` has
 * none); `null` when there is none.
 *
 * @param uri The URI (`$uri`).
 * @returns The extension as written, or `null`.
 *
 * @example Usage
 * ```ts
 * import { uriExtension } from "./nginx_types.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(uriExtension("/assets/app.min.JS"), "JS");
 * strictEqual(uriExtension("/.env"), null);
 * strictEqual(uriExtension("/v1.2/LICENSE"), null);
 * ```
 */
export function uriExtension(uri: string): string | null {
  for (let i = uri.length - 1; i > 1; i--) {
    const c = uri[i];
    if (c === "." && uri[i - 1] !== "/") return uri.slice(i + 1);
    if (c === "/") return null;
  }
  return null;
}

/** The settings {@linkcode contentTypeOf} reads (a location's, merged). */
export interface ContentTypeConf extends CharsetConf {
  /** `types`: extension (lower case) → media type. */
  types: ReadonlyMap<string, string>;
  /** `default_type`. */
  defaultType: string;
}

/**
 * The `Content-Type` nginx sends for a static file: the type of the URI's
 * extension (lower-cased), else `default_type`, then the charset filter
 * (`; charset=X` only when `charset` is set and the type is in
 * `charset_types`).
 *
 * @param uri The URI the file is served for (`$uri`).
 * @param conf The location's settings.
 * @returns The field's value.
 *
 * @example Usage
 * ```ts
 * import { contentTypeOf, NGINX_CHARSET_TYPES } from "./nginx_types.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = {
 *   types: new Map([["html", "text/html"]]),
 *   defaultType: "application/octet-stream",
 *   charset: null,
 *   charsetTypes: NGINX_CHARSET_TYPES,
 * };
 * strictEqual(contentTypeOf("/index.html", conf), "text/html");
 * strictEqual(contentTypeOf("/index.html", { ...conf, charset: "gbk" }), "text/html; charset=gbk");
 * strictEqual(contentTypeOf("/data.bin", { ...conf, charset: "gbk" }), "application/octet-stream");
 * ```
 */
export function contentTypeOf(uri: string, conf: ContentTypeConf): string {
  const ext = uriExtension(uri);
  const type = (ext === null ? undefined : conf.types.get(ext.toLowerCase())) ??
    conf.defaultType;
  return charsetFilter(type, 200, conf) ?? type;
}
