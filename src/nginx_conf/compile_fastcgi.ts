/**
 * A level's `ngx_http_fastcgi_module` settings (`FastcgiConf`), merged as
 * `ngx_http_fastcgi_merge_loc_conf` does: `fastcgi_param` is a list a level
 * replaces whole, the rest come from the nearest level that sets them,
 * with nginx 1.22's defaults. `fastcgi_pass` is a location's own (an `if`
 * inside it keeps it).
 *
 * @module
 */

import { nextUpstreamSettings } from "./compile_next_upstream.ts";
import type { FastcgiConf, FastcgiParam } from "../engine/mod.ts";
import { compileRegex } from "../engine/mod.ts";
import { MAX_PROXY_BUFFER_SIZE } from "../config/mod.ts";
import { NEVER_RELAYED } from "../upstream/mod.ts";
import type { Level } from "./compile_level.ts";
import {
  flag,
  lowerSet,
  type SettingsContext,
  size,
  time,
  value,
} from "./compile_level_values.ts";
import { ignoredHeaders } from "./compile_proxy_settings.ts";

/**
 * Fields of the reply nginx never relays for FastCGI: its hidden ones
 * (`ngx_http_fastcgi_hide_headers`), the framing and hop-by-hop fields.
 */
const DEFAULT_HIDDEN = [
  "status",
  "x-accel-expires",
  "x-accel-redirect",
  "x-accel-limit-rate",
  "x-accel-buffering",
  "x-accel-charset",
];

/**
 * Why a `fastcgi_pass` target is refused, or `null` when the gateway
 * takes it.
 *
 * @param target The directive's argument.
 * @returns The message, or `null`.
 *
 * @example Usage
 * ```ts
 * import { fastcgiTargetRefusal } from "./compile_fastcgi.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(fastcgiTargetRefusal("127.0.0.1:9000"), null);
 * ```
 */
export function fastcgiTargetRefusal(target: string): string | null {
  if (target.includes("$")) {
    return `"fastcgi_pass ${target}" is not supported: the gateway does not evaluate variables in fastcgi_pass; name the address or an upstream{}`;
  }
  if (/^unix:/i.test(target)) {
    return `"fastcgi_pass ${target}" is not supported: the gateway reaches FastCGI over TCP only; listen on 127.0.0.1:PORT (php-cgi -b 127.0.0.1:9000)`;
  }
  return null;
}

/**
 * Computes a level's FastCGI settings.
 *
 * @param ctx Names, failures, the registration of `fastcgi_pass` groups.
 * @param level The level.
 * @param group The group an enclosing location passes to (for an `if`).
 * @returns The settings, or `undefined` where nothing passes to FastCGI.
 */
export function fastcgiSettings(
  ctx: SettingsContext,
  level: Level,
  group?: string,
): FastcgiConf | undefined {
  if (group === undefined) {
    const pass = level.own("fastcgi_pass")[0];
    if (pass === undefined) return undefined;
    const registered = ctx.fastcgiPass(pass);
    if (registered === null) return undefined;
    group = registered;
  }
  const params: FastcgiParam[] = [];
  const hiddenFields = new Set<string>();
  for (const d of level.get("fastcgi_param")) {
    const [name, text, extra] = d.args as [string, string, string?];
    if (extra !== undefined && extra !== "if_not_empty") {
      ctx.fail(d, `invalid parameter "${extra}"`);
    }
    // ngx_http_fastcgi_init_params: an HTTP_ parameter stands for the
    // client's field of that name, which then is not passed; an empty one
    // is not sent at all.
    if (name.length > 5 && name.startsWith("HTTP_")) {
      hiddenFields.add(name.slice(5).toLowerCase());
      if (text === "") continue;
    }
    params.push({
      name,
      value: value(ctx, d, text),
      ifNotEmpty: extra === "if_not_empty",
    });
  }
  const hideHeaders = new Set(DEFAULT_HIDDEN);
  for (const name of lowerSet(level, "fastcgi_hide_header")) {
    hideHeaders.add(name);
  }
  for (const name of lowerSet(level, "fastcgi_pass_header")) {
    hideHeaders.delete(name);
  }
  for (const name of NEVER_RELAYED) hideHeaders.add(name);
  return {
    group,
    params,
    hiddenFields,
    passRequestHeaders: flag(level, "fastcgi_pass_request_headers", true),
    passRequestBody: flag(level, "fastcgi_pass_request_body", true),
    index: level.last("fastcgi_index")?.args[0] ?? "",
    split: splitPathInfo(ctx, level),
    interceptErrors: flag(level, "fastcgi_intercept_errors", false),
    nextUpstream: nextUpstreamSettings(ctx, level, "fastcgi"),
    timeouts: {
      connectMs: time(ctx, level, "fastcgi_connect_timeout"),
      sendMs: time(ctx, level, "fastcgi_send_timeout"),
      readMs: time(ctx, level, "fastcgi_read_timeout"),
    },
    bufferSize: size(ctx, level, "fastcgi_buffer_size", {
      fallback: 4096,
      max: MAX_PROXY_BUFFER_SIZE,
    }),
    hideHeaders,
    ignoreHeaders: ignoredHeaders(ctx, level, "fastcgi_ignore_headers"),
    keepConn: flag(level, "fastcgi_keep_conn", false),
  };
}

/** `fastcgi_split_path_info`: a regex with exactly two captures. */
function splitPathInfo(ctx: SettingsContext, level: Level): RegExp | null {
  const d = level.last("fastcgi_split_path_info");
  if (d === undefined) return null;
  const pattern = d.args[0]!;
  let regex: RegExp;
  try {
    regex = compileRegex(pattern, false);
  } catch (error) {
    ctx.fail(d, error instanceof Error ? error.message : String(error));
    return null;
  }
  // Captures counted as PCRE does: a match of the empty string has them all.
  const captures = new RegExp(`${regex.source}|`, regex.flags).exec("")!
    .length - 1;
  if (captures !== 2) {
    ctx.fail(d, `pattern "${pattern}" must have 2 captures`);
    return null;
  }
  return regex;
}
