/**
 * The SSI settings of a level (`ngx_http_ssi_merge_loc_conf`), with nginx
 * 1.22's defaults: `ssi off`, `ssi_types text/html`, `ssi_silent_errors
 * off`, `ssi_last_modified off`, `ssi_value_length 255`. A level with
 * `ssi off` gets none, so its responses cost nothing.
 *
 * @module
 */

import type { VariableScope } from "../engine/mod.ts";
import type { SsiConf } from "../ssi/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { sizeSetting } from "./values.ts";

/** What the SSI settings need of the compiler. */
export interface SsiContext {
  /** Variable names, for what `echo` and `if` read. */
  scope: VariableScope;
  /** Refuses a directive: the message is collected with its place. */
  fail(d: Directive, message: string): void;
}

/** nginx's `ssi_value_length` default. */
const VALUE_LENGTH = 255;

/**
 * The SSI settings of a level.
 *
 * @param ctx Names and refusals.
 * @param level The level.
 * @returns `{ ssi }` under `ssi on`, else nothing.
 */
export function ssiSettings(
  ctx: SsiContext,
  level: Level,
): { ssi?: SsiConf } {
  // Checked wherever they are, on or off, as nginx parses them.
  const length = valueLength(ctx, level.last("ssi_value_length"));
  const on = level.last("ssi")?.args[0]?.toLowerCase() === "on";
  if (!on) return {};
  return {
    ssi: {
      types: ssiTypes(level.get("ssi_types")),
      silentErrors: flag(level, "ssi_silent_errors"),
      lastModified: flag(level, "ssi_last_modified"),
      valueLength: length,
      scope: ctx.scope,
    },
  };
}

function flag(level: Level, name: string): boolean {
  return level.last(name)?.args[0]?.toLowerCase() === "on";
}

/** `ssi_value_length` (ngx_conf_set_size_slot). */
function valueLength(ctx: SsiContext, d: Directive | undefined): number {
  if (d === undefined) return VALUE_LENGTH;
  const parsed = sizeSetting("ssi_value_length", d.args[0]!);
  if (!parsed.ok) {
    ctx.fail(d, parsed.error);
    return VALUE_LENGTH;
  }
  const text = parsed.value;
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    text.slice(-1) as "k" | "m" | "g"
  ] ?? 1;
  return Number(text.replace(/\D$/, "")) * unit;
}

/**
 * `ssi_types` (ngx_http_types_slot): the nearest level's list, lower case,
 * with `text/html` always; `*` takes any type.
 */
function ssiTypes(list: readonly Directive[]): ReadonlySet<string> {
  const types = new Set(["text/html"]);
  for (const d of list) {
    for (const arg of d.args) {
      if (arg === "*") return new Set(["*"]);
      types.add(arg.toLowerCase());
    }
  }
  return types;
}
