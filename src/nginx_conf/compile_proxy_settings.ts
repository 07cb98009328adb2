/**
 * The proxy module's settings of a level (ngx_http_proxy_module): the
 * fields sent upstream over nginx's defaults, `proxy_redirect` with its
 * default, cookies, the fields hidden, passed and ignored, timeouts,
 * buffers and `proxy_next_upstream`. `fastcgi_*` reads its ignored fields
 * here too.
 *
 * @module
 */

import {
  compileRegex,
  compileValue,
  type ComplexValue,
  constantValue,
  type LocationConf,
  type ProxyPass,
  type ProxyRedirect,
  ValueError,
} from "../engine/mod.ts";
import { MAX_PROXY_BUFFER_SIZE } from "../config/mod.ts";
import { cookieRewrites } from "./compile_cookie.ts";
import type { Level } from "./compile_level.ts";
import {
  flag,
  type LocationIdentity,
  lowerSet,
  type SettingsContext,
  size,
  time,
  value,
} from "./compile_level_values.ts";
import { nextUpstreamSettings } from "./compile_next_upstream.ts";

/** The proxy module's part of a location's settings. */
export type ProxySettings = Pick<
  LocationConf,
  | "proxySetHeaders"
  | "proxyHttpVersion"
  | "proxyRawUri"
  | "proxyRedirect"
  | "proxyCookieDomain"
  | "proxyCookiePath"
  | "proxyHideHeaders"
  | "proxyPassHeaders"
  | "proxyIgnoreHeaders"
  | "proxyTimeouts"
  | "proxyBufferSize"
  | "proxyBuffering"
  | "proxyInterceptErrors"
  | "proxyNextUpstream"
>;

/**
 * A level's proxy settings, read in the order nginx's merge reads them.
 *
 * @param ctx Names, failures.
 * @param at The level, its identity and its `proxy_pass` (for the default
 * `proxy_redirect`).
 * @returns The settings.
 */
export function proxySettings(
  ctx: SettingsContext,
  at: { level: Level; identity: LocationIdentity; proxyPass: ProxyPass | null },
): ProxySettings {
  const { level, identity, proxyPass } = at;
  return {
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
  };
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
