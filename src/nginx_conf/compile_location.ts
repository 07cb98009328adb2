/**
 * A level's settings as the request phases read them (`LocationConf`),
 * computed from the nearest level that sets each directive, with nginx
 * 1.22's defaults where none does.
 *
 * @module
 */

import {
  type AddHeader,
  compileValue,
  type ComplexValue,
  constantValue,
  type ErrorPageTarget,
  type Expires,
  type LocationConf,
  type ProxyPass,
  type ProxyRedirect,
  ValueError,
  type VariableScope,
} from "../engine/mod.ts";
import { compileRegex, sendable, SENDABLE_STATUSES } from "../engine/mod.ts";
import { NGINX_CHARSET_TYPES, NGINX_DEFAULT_TYPES } from "../static/mod.ts";
import type { Level } from "./compile_level.ts";
import { AccessList, type AccessRule, parseAccessRule } from "../access/mod.ts";
import type { Directive } from "./parser.ts";
import type { FieldNames } from "../runtime/mod.ts";
import { cookieRewrites } from "./compile_cookie.ts";
import { nextUpstreamSettings } from "./compile_next_upstream.ts";
import { gzipOkSettings, gzipSettings } from "./compile_gzip.ts";
import { ssiSettings } from "./compile_ssi.ts";
import type { AccessSettings } from "./compile_access.ts";
import { prefixed } from "./paths.ts";
import { nginxTimeMs, sizeSetting } from "./values.ts";
import { MAX_PROXY_BUFFER_SIZE, sizeText } from "../config/mod.ts";

/** What computing settings needs besides the level. */
export interface SettingsContext {
  /** Variable names. */
  scope: VariableScope;
  /** The nginx prefix relative paths start at. */
  prefix: string;
  /** Refuses a directive: the message is collected with its place. */
  fail(d: Directive, message: string): void;
  /** Warns about a directive. */
  warn(d: Directive, message: string): void;
  /** The extension map of a `types {}` block. */
  types(block: Directive): ReadonlyMap<string, string>;
  /** The model of a `proxy_pass` (its group registered). */
  proxyPass(d: Directive): ProxyPass | null;
  /** The group a `fastcgi_pass` names (registered), or `null` when refused. */
  fastcgiPass(d: Directive): string | null;
  /** The access and preaccess settings of a level. */
  access(level: Level): AccessSettings;
  /** The access logs of a level. */
  accessLogs(level: Level): LocationConf["accessLogs"];
  /** The error logs of a level. */
  errorLogs(level: Level): LocationConf["errorLogs"];
}

const DEFAULT_TYPES = NGINX_DEFAULT_TYPES;
const DEFAULT_CHARSET_TYPES = [...NGINX_CHARSET_TYPES];

const MINUTE = 60_000;

/** An `on`/`off` directive's value at a level, `fallback` when no level sets it. */
export function flag(level: Level, name: string, fallback: boolean): boolean {
  const d = level.last(name);
  return d === undefined ? fallback : d.args[0]!.toLowerCase() === "on";
}

/** `underscores_in_headers` and `ignore_invalid_headers`, unless nginx's defaults. */
function fieldNames(level: Level): { fieldNames?: FieldNames } {
  const underscores = flag(level, "underscores_in_headers", false);
  const ignoreInvalid = flag(level, "ignore_invalid_headers", true);
  return underscores || !ignoreInvalid
    ? { fieldNames: Object.freeze({ underscores, ignoreInvalid }) }
    : {};
}

/** A directive's argument compiled as a value; a refusal is collected. */
export function value(
  ctx: SettingsContext,
  d: Directive,
  text: string,
): ComplexValue {
  try {
    return compileValue(text, ctx.scope);
  } catch (error) {
    if (!(error instanceof ValueError)) throw error;
    ctx.fail(d, error.message);
    return constantValue(text);
  }
}

/** A time directive in milliseconds (nginx's default of 60 s when unset). */
export function time(ctx: SettingsContext, level: Level, name: string): number {
  const d = level.last(name);
  if (d === undefined) return MINUTE;
  const ms = nginxTimeMs(d.args[0]!);
  if (ms === null || ms > 2 ** 31 - 1) {
    ctx.fail(d, `"${name}" directive invalid value`);
    return MINUTE;
  }
  return ms;
}

/** A size directive in bytes, `fallback` when unset; past `max` refused. */
export function size(
  ctx: SettingsContext,
  level: Level,
  name: string,
  { fallback, max }: { fallback: number; max?: number },
): number {
  const d = level.last(name);
  if (d === undefined) return fallback;
  const parsed = sizeSetting(name, d.args[0]!);
  if (!parsed.ok) {
    ctx.fail(d, parsed.error);
    return fallback;
  }
  const text = parsed.value;
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    text.slice(-1) as "k" | "m" | "g"
  ] ?? 1;
  const bytes = Number(text.replace(/\D$/, "")) * unit;
  if (max !== undefined && bytes > max) {
    ctx.fail(
      d,
      `"${name} ${
        d.args[0]
      }" is not supported: the gateway takes a size up to ${
        sizeText(max)
      } (a buffer a peer fills, memory bounded per request)`,
    );
    return fallback;
  }
  return bytes;
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
  const compiled = d === undefined ? constantValue(text) : value(ctx, d, text);
  if (compiled.constant !== null) {
    return constantValue(prefixed(ctx.prefix, compiled.constant));
  }
  return {
    text,
    constant: null,
    usesCaptures: compiled.usesCaptures,
    evaluate: (r) => prefixed(ctx.prefix, compiled.evaluate(r)),
  };
}

/** `expires` (ngx_http_headers_expires). */
function expires(ctx: SettingsContext, level: Level): Expires {
  const d = level.last("expires");
  if (d === undefined) return { kind: "off" };
  let [first = "", second] = d.args;
  let modified = false;
  if (first === "modified") {
    modified = true;
    first = second ?? "";
  } else if (second !== undefined) {
    ctx.fail(d, `invalid value "${second}"`);
  }
  if (first === "epoch") return { kind: "epoch" };
  if (first === "max") return { kind: "max" };
  if (first === "off") return { kind: "off" };
  if (first.startsWith("@")) {
    const ms = nginxTimeMs(first.slice(1));
    if (ms === null || ms >= 86_400_000) {
      ctx.fail(d, `daily time value "${first}" must be less than 24 hours`);
      return { kind: "off" };
    }
    return { kind: "daily", secondsOfDay: Math.floor(ms / 1000) };
  }
  const negative = first.startsWith("-");
  const text = first.replace(/^[+-]/, "");
  const ms = nginxTimeMs(text);
  if (ms === null) {
    ctx.fail(d, `invalid value "${first}"`);
    return { kind: "off" };
  }
  const seconds = Math.floor(ms / 1000) * (negative ? -1 : 1);
  return { kind: "after", seconds, modified };
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
      pages.set(code, { uri: value(ctx, d, uri), overwrite });
    }
  }
  return pages;
}

/** `proxy_set_header` over nginx's defaults (ngx_http_proxy_init_headers). */
function proxySetHeaders(
  ctx: SettingsContext,
  level: Level,
): [string, ComplexValue][] {
  const set: [string, ComplexValue][] = level.get("proxy_set_header").map((
    d,
  ) => [d.args[0]!, value(ctx, d, d.args[1]!)]);
  const named = new Set(set.map(([name]) => name.toLowerCase()));
  for (
    const [name, text] of [["Host", "$proxy_host"], ["Connection", "close"]]
  ) {
    if (!named.has(name!.toLowerCase())) {
      set.push([name!, compileValue(text!, ctx.scope)]);
    }
  }
  return set;
}

/** `proxy_redirect` (ngx_http_proxy_redirect, default in merge_loc_conf). */
function proxyRedirect(
  ctx: SettingsContext,
  level: Level,
  options: { pass: ProxyPass | null; name: string; regex: boolean },
): ProxyRedirect[] {
  const list = level.get("proxy_redirect");
  // ngx_http_proxy_redirect: after `off` any other line of the level is a
  // duplicate, and so is `off` after a rewrite.
  let off = false;
  let some = false;
  for (const d of list) {
    const isOff = d.args.length === 1 && d.args[0] === "off";
    if (off || (isOff && some)) {
      ctx.fail(d, `"proxy_redirect" directive is duplicate`);
    }
    if (isOff) off = true;
    else some = true;
  }
  const out: ProxyRedirect[] = [];
  const useDefault = list.length === 0 ||
    list.some((d) => d.args[0] === "default");
  if (list.some((d) => d.args[0] === "off")) return [];
  if (useDefault && options.pass !== null && !options.regex) {
    // Without a URI part nginx's default is `proxy_pass` text + "/" → "/"
    // (ngx_http_proxy_merge_loc_conf), not the location's name.
    const bare = options.pass.uri === null;
    out.push({
      kind: "text",
      from: constantValue(
        options.pass.text + (bare ? "/" : options.pass.uri),
      ),
      to: constantValue(bare ? "/" : options.name),
    });
  }
  for (const d of list) {
    if (d.args[0] === "default" || d.args[0] === "off") continue;
    const [from = "", to = ""] = d.args;
    if (d.args.length !== 2) {
      ctx.fail(d, `invalid number of arguments in "proxy_redirect" directive`);
      continue;
    }
    if (from.startsWith("~")) {
      const caseless = from.startsWith("~*");
      try {
        out.push({
          kind: "regex",
          regex: compileRegex(from.slice(caseless ? 2 : 1), caseless),
          to: value(ctx, d, to),
        });
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        ctx.fail(d, error.message);
      }
    } else {
      out.push({
        kind: "text",
        from: value(ctx, d, from),
        to: value(ctx, d, to),
      });
    }
  }
  return out;
}

/** An array directive's first arguments in lower case (the nearest level's list). */
export function lowerSet(level: Level, name: string): Set<string> {
  return new Set(level.get(name).map((d) => d.args[0]!.toLowerCase()));
}

/** The fields `proxy_ignore_headers` takes (`ngx_http_upstream_ignore_headers_masks`). */
const IGNORABLE = new Set([
  "x-accel-redirect",
  "x-accel-expires",
  "x-accel-limit-rate",
  "x-accel-buffering",
  "x-accel-charset",
  "expires",
  "cache-control",
  "set-cookie",
  "vary",
]);

/**
 * `proxy_ignore_headers` (or `fastcgi_ignore_headers`), the nearest
 * level's (a bitmask in nginx: `ngx_conf_merge_bitmask_value`). Only
 * `X-Accel-Redirect` changes what the gateway does: it has no cache, and
 * the other `X-Accel-*` fields are hidden from the client and not acted on.
 */
export function ignoredHeaders(
  ctx: SettingsContext,
  level: Level,
  directive = "proxy_ignore_headers",
): Set<string> {
  const names = new Set<string>();
  for (const d of level.get(directive)) {
    for (const arg of d.args) {
      const name = arg.toLowerCase();
      if (IGNORABLE.has(name)) names.add(name);
      else ctx.fail(d, `invalid value "${arg}"`);
    }
  }
  return names;
}

/** The parts of a location's identity that settings depend on. */
export interface LocationIdentity {
  match: LocationConf["match"];
  name: string;
  regex: RegExp | null;
  place: LocationConf["place"];
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
  const rootOrAlias = level.nearest(["root", "alias"]);
  const alias = rootOrAlias?.name === "alias" ? rootOrAlias : undefined;
  const passDirective = level.own("proxy_pass")[0];
  const proxyPass = passDirective === undefined
    ? null
    : ctx.proxyPass(passDirective);
  const typesBlock = level.last("types");
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
    types: typesBlock === undefined ? DEFAULT_TYPES : ctx.types(typesBlock),
    defaultType: level.last("default_type")?.args[0] ?? "text/plain",
    charset: charset === undefined || charset === "off" ? null : charset,
    charsetTypes: new Set(
      charsetTypes === undefined
        ? DEFAULT_CHARSET_TYPES
        : charsetTypes.args.includes("*")
        ? ["*"]
        : [...DEFAULT_CHARSET_TYPES.slice(0, 1), ...charsetTypes.args],
    ),
    addHeaders: level.get("add_header").map((d): AddHeader => ({
      name: d.args[0]!,
      value: value(ctx, d, d.args[1]!),
      always: d.args[2] === "always",
    })),
    expires: expires(ctx, level),
    etag: flag(level, "etag", true),
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
    proxySetHeaders: proxySetHeaders(ctx, level),
    proxyHttpVersion: level.last("proxy_http_version")?.args[0] === "1.1"
      ? "1.1"
      : "1.0",
    proxyRawUri: flag(level, "station_proxy_raw_uri", false),
    proxyRedirect: proxyRedirect(ctx, level, {
      pass: proxyPass,
      name: identity.name,
      regex: identity.regex !== null,
    }),
    proxyCookieDomain: cookieRewrites(ctx, level, "proxy_cookie_domain"),
    proxyCookiePath: cookieRewrites(ctx, level, "proxy_cookie_path"),
    proxyHideHeaders: lowerSet(level, "proxy_hide_header"),
    proxyPassHeaders: lowerSet(level, "proxy_pass_header"),
    proxyIgnoreHeaders: ignoredHeaders(ctx, level),
    proxyTimeouts: {
      connectMs: time(ctx, level, "proxy_connect_timeout"),
      sendMs: time(ctx, level, "proxy_send_timeout"),
      readMs: time(ctx, level, "proxy_read_timeout"),
    },
    proxyBufferSize: size(ctx, level, "proxy_buffer_size", {
      fallback: 4096,
      max: MAX_PROXY_BUFFER_SIZE,
    }),
    proxyBuffering: flag(level, "proxy_buffering", true),
    proxyInterceptErrors: flag(level, "proxy_intercept_errors", false),
    proxyNextUpstream: nextUpstreamSettings(ctx, level, "proxy"),
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
