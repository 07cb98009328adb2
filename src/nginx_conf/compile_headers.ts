/**
 * The headers module's settings of a level (ngx_http_headers_module): the
 * fields `add_header` adds, and `expires` with its `Expires` and
 * `Cache-Control` fields.
 *
 * @module
 */

import type { AddHeader, Expires, LocationConf } from "../engine/mod.ts";
import type { Level } from "./compile_level.ts";
import { type SettingsContext, value } from "./compile_level_values.ts";
import { nginxTimeMs } from "./values.ts";

/**
 * A level's `add_header` fields and `expires`.
 *
 * @param ctx Names, failures.
 * @param level The level.
 * @returns The settings.
 */
export function headersSettings(
  ctx: SettingsContext,
  level: Level,
): Pick<LocationConf, "addHeaders" | "expires"> {
  return {
    addHeaders: level.get("add_header").map((d): AddHeader => ({
      name: d.args[0]!,
      value: value(ctx, d, d.args[1]!),
      always: d.args[2] === "always",
    })),
    expires: expires(ctx, level),
  };
}

/** `expires` (ngx_http_headers_expires). */
function expires(ctx: SettingsContext, level: Level): Expires {
  const d = level.last("expires");
  if (d === undefined) return { kind: "off" };
  let [first = "", second] = d.args;
  const last = d.args.at(-1) ?? "";
  if (last.includes("$") && (second === undefined || first === "modified")) {
    // ngx_http_headers_expires: a value with variables is kept whole and
    // parsed for each response (ngx_http_set_expires).
    const compiled = value(ctx, d, last);
    if (compiled.constant === null) {
      return {
        kind: "variable",
        value: compiled,
        modified: second !== undefined,
      };
    }
  }
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
