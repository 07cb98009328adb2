/**
 * `proxy_next_upstream` and `fastcgi_next_upstream` with their `_tries`
 * and `_timeout`: read once per location into the small value the walk
 * over the group's servers reads (`NextUpstream`), as nginx 1.22's
 * `ngx_conf_set_bitmask_slot` and `ngx_http_proxy_merge_loc_conf` do.
 *
 * @module
 */

import {
  DEFAULT_NEXT_UPSTREAM,
  type NextUpstream,
  nextUpstreamMask,
  readNextUpstream,
} from "../upstream/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { type SettingsContext, time } from "./compile_level_values.ts";

const MODULES: ReadonlyMap<string, "proxy" | "fastcgi"> = new Map([
  ["proxy_next_upstream", "proxy"],
  ["fastcgi_next_upstream", "fastcgi"],
]);

/**
 * What nginx says of one `*_next_upstream` directive when it reads it:
 * `invalid value "x"` (an error) and `duplicate value "x"` (warnings).
 *
 * @param d The directive.
 * @returns The error, or `null`, and the warnings; `null` for any other
 * directive.
 */
export function nextUpstreamVerdict(
  d: Directive,
): { error: string | null; warnings: string[] } | null {
  const module = MODULES.get(d.name);
  if (module === undefined) return null;
  const read = readNextUpstream(d.args, { module });
  return {
    error: read.invalid === null ? null : `invalid value "${read.invalid}"`,
    warnings: read.duplicates.map((word) => `duplicate value "${word}"`),
  };
}

/**
 * A level's `*_next_upstream` settings: the nearest level's directives
 * ORed into one bit set (`off` alone when named), `_tries` and
 * `_timeout` from the nearest level that sets each; nginx's default
 * shared when none is set.
 *
 * @param ctx Where refusals go.
 * @param level The level.
 * @param module `proxy` or `fastcgi`.
 * @returns The settings.
 */
export function nextUpstreamSettings(
  ctx: SettingsContext,
  level: Level,
  module: "proxy" | "fastcgi",
): NextUpstream {
  const list = level.get(`${module}_next_upstream`);
  const triesName = `${module}_next_upstream_tries`;
  const timeoutName = `${module}_next_upstream_timeout`;
  const triesSet = level.last(triesName);
  const timeoutSet = level.last(timeoutName);
  if (list.length === 0 && !triesSet && !timeoutSet) {
    return DEFAULT_NEXT_UPSTREAM;
  }
  let mask = 0;
  for (const d of list) mask = readNextUpstream(d.args, { module, mask }).mask;
  return Object.freeze({
    mask: list.length === 0
      ? DEFAULT_NEXT_UPSTREAM.mask
      : nextUpstreamMask(mask),
    tries: triesSet === undefined ? 0 : count(ctx, triesSet),
    timeoutMs: timeoutSet === undefined ? 0 : time(ctx, level, timeoutName),
  });
}

/** A number directive (`ngx_conf_set_num_slot`): `invalid number` otherwise. */
function count(ctx: SettingsContext, d: Directive): number {
  const text = d.args[0]!;
  if (!/^\d{1,9}$/.test(text)) {
    ctx.fail(d, `"${d.name}" directive invalid number`);
    return 0;
  }
  return Number(text);
}
