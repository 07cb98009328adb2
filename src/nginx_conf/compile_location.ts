/**
 * A level's settings as the request phases read them (`LocationConf`),
 * computed from the nearest level that sets each directive, with nginx
 * 1.22's defaults where none does: the core module's here, each other
 * module's from its own file (`compile_proxy_settings.ts`,
 * `compile_headers.ts`, `compile_gzip.ts`, `compile_ssi.ts`, …).
 *
 * @module
 */

import {
  type ComplexValue,
  constantValue,
  type ErrorPageTarget,
  type LocationConf,
  sendable,
  SENDABLE_STATUSES,
} from "../engine/mod.ts";
import { NGINX_CHARSET_TYPES, NGINX_DEFAULT_TYPES } from "../static/mod.ts";
import type { Level } from "./compile_level.ts";
import { referersSettings } from "./compile_referers.ts";
import { AccessList, type AccessRule, parseAccessRule } from "../access/mod.ts";
import type { FieldNames } from "../runtime/mod.ts";
import { gzipOkSettings, gzipSettings } from "./compile_gzip.ts";
import { ssiSettings } from "./compile_ssi.ts";
import { headersSettings } from "./compile_headers.ts";
import { proxySettings } from "./compile_proxy_settings.ts";
import {
  flag,
  type LocationIdentity,
  type SettingsContext,
  size,
  value,
} from "./compile_level_values.ts";
import type { Directive } from "./parser.ts";
import { prefixed } from "./paths.ts";

const DEFAULT_TYPES = NGINX_DEFAULT_TYPES;
const DEFAULT_CHARSET_TYPES = [...NGINX_CHARSET_TYPES];

/** `underscores_in_headers` and `ignore_invalid_headers`, unless nginx's defaults. */
function fieldNames(level: Level): { fieldNames?: FieldNames } {
  const underscores = flag(level, "underscores_in_headers", false);
  const ignoreInvalid = flag(level, "ignore_invalid_headers", true);
  return underscores || !ignoreInvalid
    ? { fieldNames: Object.freeze({ underscores, ignoreInvalid }) }
    : {};
}

/** A path setting: relative to the prefix; with variables, at run time. */
function pathValue(
  ctx: SettingsContext,
  d: Directive | undefined,
  fallback: string,
  root = false,
): ComplexValue {
  let text = d?.args[0] ?? fallback;
  // ngx_http_core_root drops one trailing slash of a `root` (not of an
  // `alias`) before its variables are read, so the paths it makes (and
  // the `open()` lines naming them) have no `//`. `root /` keeps its
  // slash here: the folder must stay a path the containment can resolve.
  if (root && text.length > 1 && text.endsWith("/")) text = text.slice(0, -1);
  // A `${dollar}` of nginx's literal-`$` idiom (a geo with only a
  // default) is text here: the folder is a constant, as it is for nginx,
  // which makes the same path for every request.
  const compiled = d === undefined
    ? constantValue(text)
    : value(ctx, d, text, true);
  if (compiled.constant !== null) {
    return constantValue(prefixed(ctx.prefix, compiled.constant));
  }
  return {
    text,
    constant: null,
    usesCaptures: compiled.usesCaptures,
    evaluate: (r) => prefixed(ctx.prefix, compiled.evaluate(r)),
    ...(compiled.folder === undefined
      ? {}
      : { folder: prefixedValue(ctx.prefix, compiled.folder) }),
  };
}

/** A value made absolute against the prefix, as nginx's `ngx_get_full_name`. */
function prefixedValue(prefix: string, v: ComplexValue): ComplexValue {
  if (v.constant !== null) return constantValue(prefixed(prefix, v.constant));
  return {
    text: v.text,
    constant: null,
    usesCaptures: v.usesCaptures,
    evaluate: (r) => prefixed(prefix, v.evaluate(r)),
  };
}

/** `error_page code … [=[response]] uri` (ngx_http_core_error_page). */
function errorPages(
  ctx: SettingsContext,
  level: Level,
): Map<number, ErrorPageTarget> {
  const pages = new Map<number, ErrorPageTarget>();
  for (const d of level.get("error_page")) {
    const args = [...d.args];
    const uri = args.pop()!;
    let overwrite: number | null = null;
    const last = args[args.length - 1];
    if (last?.startsWith("=")) {
      args.pop();
      const code = last.slice(1);
      if (code === "") overwrite = 0;
      else if (/^\d{3}$/.test(code) && sendable(Number(code))) {
        overwrite = Number(code);
      } else if (/^\d{3}$/.test(code)) {
        ctx.fail(
          d,
          `"error_page ${last}" is not supported: ${SENDABLE_STATUSES}`,
        );
        continue;
      } else {
        ctx.fail(d, `invalid value "${last}"`);
        continue;
      }
    }
    if (args.length === 0) {
      ctx.fail(d, `invalid number of arguments in "error_page" directive`);
      continue;
    }
    for (const arg of args) {
      const code = /^\d+$/.test(arg) ? Number(arg) : NaN;
      if (!(code >= 300 && code <= 599) || code === 499) {
        ctx.fail(d, `value "${arg}" must be between 300 and 599`);
        continue;
      }
      // ngx_http_core_error_page: 494-497's page without `=` is sent as
      // their own pages are, with 400.
      pages.set(code, {
        uri: value(ctx, d, uri),
        overwrite: overwrite === null && code >= 494 && code <= 497
          ? 400
          : overwrite,
      });
    }
  }
  return pages;
}

/**
 * Computes a level's settings.
 *
 * @param level The level.
 * @param identity How it matches.
 * @param ctx Names, prefix, failures, types, proxy targets.
 * @returns The settings (`locations` and `rewrite` empty: the caller sets them).
 */
export function locationSettings(
  level: Level,
  identity: LocationIdentity,
  ctx: SettingsContext,
): LocationConf {
  // One level takes `root` or `alias`, not both (ngx_http_core_root; one
  // of a name twice is the parser's duplicate).
  const paths = level.block.filter((d) =>
    d.name === "root" || d.name === "alias"
  );
  const [first, second] = paths;
  if (first && second && first.name !== second.name) {
    ctx.fail(
      second,
      `"${second.name}" directive is duplicate, "${first.name}" directive was specified earlier`,
    );
  }
  const rootOrAlias = level.nearest(["root", "alias"]);
  const alias = rootOrAlias?.name === "alias" ? rootOrAlias : undefined;
  const passDirective = level.own("proxy_pass")[0];
  const proxyPass = passDirective === undefined
    ? null
    : ctx.proxyPass(passDirective);
  // Every `types {}` of the nearest level that has one: a second block
  // adds to the first (a level's own replaces its parent's, as a list).
  const typesBlocks = level.get("types");
  const charset = level.last("charset")?.args[0];
  const charsetTypes = level.last("charset_types");
  const gzipStatic = (level.last("gzip_static")?.args[0] ?? "off")
    .toLowerCase();
  const tryFiles = level.own("try_files")[0];
  return {
    ...identity,
    locations: { exact: new Map(), prefixes: [], regexes: [] },
    internal: level.own("internal").length > 0,
    rewrite: null,
    root: pathValue(
      ctx,
      rootOrAlias?.name === "root" ? rootOrAlias : undefined,
      "html",
      true,
    ),
    alias: alias === undefined ? null : pathValue(ctx, alias, ""),
    index: level.get("index").flatMap((d) =>
      d.args.map((a) => value(ctx, d, a))
    ).concat(
      level.get("index").length === 0 ? [constantValue("index.html")] : [],
    ),
    tryFiles: tryFiles === undefined ? null : {
      files: tryFiles.args.slice(0, -1).map((a) => value(ctx, tryFiles, a)),
      fallback: /^=\d+$/.test(tryFiles.args.at(-1)!)
        ? { kind: "code", code: Number(tryFiles.args.at(-1)!.slice(1)) }
        : { kind: "uri", uri: value(ctx, tryFiles, tryFiles.args.at(-1)!) },
    },
    logNotFound: flag(level, "log_not_found", true),
    ...fieldNames(level),
    ...(flag(level, "autoindex", false)
      ? {
        autoindex: {
          exactSize: flag(level, "autoindex_exact_size", true),
          localtime: flag(level, "autoindex_localtime", false),
        },
      }
      : {}),
    // `stub_status` and its old form `stub_status on` (nginx 1.22 reads
    // no argument: ngx_http_set_stub_status).
    ...(level.own("stub_status").length > 0
      ? { stubStatus: true as const }
      : {}),
    types: typesBlocks.length === 0 ? DEFAULT_TYPES : ctx.types(typesBlocks),
    defaultType: level.last("default_type")?.args[0] ?? "text/plain",
    charset: charset === undefined || charset === "off" ? null : charset,
    charsetTypes: new Set(
      charsetTypes === undefined
        ? DEFAULT_CHARSET_TYPES
        : charsetTypes.args.includes("*")
        ? ["*"]
        : [...DEFAULT_CHARSET_TYPES.slice(0, 1), ...charsetTypes.args],
    ),
    ...headersSettings(ctx, level),
    etag: flag(level, "etag", true),
    maxRanges: maxRanges(level),
    referers: referersSettings(ctx, level),
    gzipStatic: gzipStatic === "on" || gzipStatic === "always"
      ? gzipStatic
      : "off",
    gzipVary: flag(level, "gzip_vary", false),
    gzip: gzipSettings(ctx, level),
    gzipOk: gzipOkSettings(ctx, level),
    ...ssiSettings(ctx, level),
    errorPages: errorPages(ctx, level),
    recursiveErrorPages: flag(level, "recursive_error_pages", false),
    errorPageFallback: flag(level, "station_error_page_fallback", false),
    proxyPass,
    ...proxySettings(ctx, { level, identity, proxyPass }),
    // A limit, not a buffer: a body past client_body_buffer_size goes to a file.
    clientMaxBodySize: size(ctx, level, "client_max_body_size", {
      fallback: 1024 * 1024,
    }),
    defaultPage: flag(level, "station_default_page", false),
    accessRules: accessRules(ctx, level),
    ...ctx.access(level),
    accessLogs: ctx.accessLogs(level),
    errorLogs: ctx.errorLogs(level),
  };
}

/** `allow`/`deny` of the nearest level that has any, in file order. */
function accessRules(ctx: SettingsContext, level: Level): AccessList | null {
  const list = level.nearestList(["allow", "deny"]);
  if (list.length === 0) return null;
  const rules: AccessRule[] = [];
  for (const d of list) {
    const parsed = parseAccessRule(d.name as "allow" | "deny", d.args[0]!);
    if (!parsed.ok) {
      ctx.fail(d, parsed.error);
      continue;
    }
    if (parsed.warning !== null) ctx.warn(d, parsed.warning);
    rules.push(parsed.rule);
  }
  return new AccessList(rules);
}

/** `max_ranges` (its value checked by `tuningProblem`), absent when unset. */
function maxRanges(level: Level): number | undefined {
  const d = level.last("max_ranges");
  return d === undefined ? undefined : Number(d.args[0]);
}
