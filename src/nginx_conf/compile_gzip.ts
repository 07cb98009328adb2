/**
 * The gzip settings of a level (`ngx_http_gzip_merge_conf` and the core
 * module's `gzip_*` merge), with nginx 1.22's defaults: `gzip off`, level
 * 1, `gzip_min_length 20`, `gzip_types text/html`, `gzip_http_version
 * 1.1`, `gzip_proxied off`, no `gzip_disable`.
 *
 * @module
 */

import {
  compileRegex,
  type GzipConf,
  type GzipOkConf,
  type GzipProxied,
  ValueError,
} from "../engine/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { size } from "./compile_level_values.ts";

/** What the gzip settings need of the compiler. */
export interface GzipContext {
  /** Refuses a directive: the message is collected with its place. */
  fail(d: Directive, message: string): void;
}

const PROXIED: ReadonlySet<string> = new Set<GzipProxied>([
  "off",
  "expired",
  "no-cache",
  "no-store",
  "private",
  "no_last_modified",
  "no_etag",
  "auth",
  "any",
]);

/** `ngx_http_html_default_types`: always in `gzip_types`. */
const HTML = "text/html";

/**
 * The gzip filter's settings of a level.
 *
 * @param ctx Where refusals go.
 * @param level The level.
 * @returns The settings.
 */
export function gzipSettings(ctx: GzipContext, level: Level): GzipConf {
  const on = level.last("gzip");
  return {
    enabled: on !== undefined && on.args[0]!.toLowerCase() === "on",
    level: compLevel(ctx, level.last("gzip_comp_level")),
    minLength: size(ctx, level, "gzip_min_length", { fallback: 20 }),
    types: gzipTypes(level.get("gzip_types")),
  };
}

/**
 * What `ngx_http_gzip_ok` reads of a level.
 *
 * @param ctx Where refusals go.
 * @param level The level.
 * @returns The settings.
 */
export function gzipOkSettings(ctx: GzipContext, level: Level): GzipOkConf {
  const version = level.last("gzip_http_version");
  let httpVersion: "1.0" | "1.1" = "1.1";
  if (version !== undefined) {
    const text = version.args[0]!;
    if (text === "1.0" || text === "1.1") httpVersion = text;
    else ctx.fail(version, `invalid value "${text}"`);
  }
  const proxied = new Set<GzipProxied>();
  for (const d of level.get("gzip_proxied")) {
    for (const arg of d.args) {
      // ngx_conf_set_bitmask_slot compares without regard to case.
      const flag = arg.toLowerCase();
      if (PROXIED.has(flag)) proxied.add(flag as GzipProxied);
      else ctx.fail(d, `invalid value "${arg}"`);
    }
  }
  if (proxied.size === 0) proxied.add("off");
  // The regexes are the nearest level's list (a level with its own
  // `gzip_disable` starts a new one); `msie6` is inherited on its own.
  const disable: RegExp[] = [];
  for (const d of level.get("gzip_disable")) {
    for (const arg of d.args) {
      if (arg === "msie6") continue;
      try {
        disable.push(compileRegex(arg, true));
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        ctx.fail(d, error.message);
      }
    }
  }
  let disableMsie6 = false;
  for (let at: Level | null = level; at !== null; at = at.parent) {
    if (at.own("gzip_disable").some((d) => d.args.includes("msie6"))) {
      disableMsie6 = true;
      break;
    }
  }
  return { httpVersion, proxied, disable, disableMsie6 };
}

/** `gzip_comp_level` (ngx_conf_set_num_slot, bounds 1 to 9). */
function compLevel(ctx: GzipContext, d: Directive | undefined): number {
  if (d === undefined) return 1;
  const text = d.args[0]!;
  if (!/^\d+$/.test(text)) {
    ctx.fail(d, `"gzip_comp_level" directive invalid number`);
    return 1;
  }
  const n = Number(text);
  if (n < 1 || n > 9) {
    ctx.fail(d, "value must be between 1 and 9");
    return 1;
  }
  return n;
}

/**
 * `gzip_types` (ngx_http_types_slot): the nearest level's list, lower case,
 * with `text/html` always; `*` takes any type (and a response without one).
 */
function gzipTypes(list: readonly Directive[]): ReadonlySet<string> {
  const types = new Set([HTML]);
  for (const d of list) {
    for (const arg of d.args) {
      if (arg === "*") return new Set(["*"]);
      types.add(arg.toLowerCase());
    }
  }
  return types;
}
