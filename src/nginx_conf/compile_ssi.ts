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
import { size } from "./compile_level_values.ts";

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
  const length = size(ctx, level, "ssi_value_length", {
    fallback: VALUE_LENGTH,
  });
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
