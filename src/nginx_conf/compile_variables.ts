/**
 * The variables a configuration declares, compiled before anything reads
 * them: `map` and `geo` blocks (declared first, then filled, since a map's
 * values may read other maps), and the names `set` and named captures
 * make (nginx registers them at parse time).
 *
 * @module
 */

import {
  compileRegex,
  type ComplexValue,
  constantValue,
  type MapConf,
  ValueError,
} from "../engine/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import { compileGeo } from "./compile_geo.ts";
import type { Directive } from "./parser.ts";

/**
 * The `map` and `geo` variables of a block, each empty until
 * {@linkcode compileMaps} fills it.
 *
 * @param block The `http` block's directives.
 * @param ctx Where refusals go.
 * @returns The variables by name, lower case, without `$`.
 */
export function declareMaps(
  block: readonly Directive[],
  ctx: Pick<CompileContext, "fail">,
): Map<string, MapConf> {
  const maps = new Map<string, MapConf>();
  for (const d of block) {
    if (d.name !== "map" && d.name !== "geo") continue;
    // map's second argument; geo's last (`geo [$address] $variable`).
    const name = d.args.at(-1)!;
    if (!name.startsWith("$")) {
      ctx.fail(d, `invalid variable name "${name}"`);
      continue;
    }
    // Filled by compileMaps: a map's values may read other maps.
    maps.set(name.slice(1).toLowerCase(), {
      source: constantValue(""),
      exact: new Map(),
      regexes: [],
      defaultValue: constantValue(""),
    });
  }
  return maps;
}

/**
 * Fills the variables {@linkcode declareMaps} made, once the scope knows
 * every name.
 *
 * @param block The `http` block's directives.
 * @param maps The declared variables.
 * @param ctx Where refusals go, and the value compiler.
 */
export function compileMaps(
  block: readonly Directive[],
  maps: Map<string, MapConf>,
  ctx: CompileContext,
): void {
  for (const d of block) {
    if (d.name === "geo" && d.args.at(-1)!.startsWith("$")) {
      const name = d.args.at(-1)!.slice(1).toLowerCase();
      Object.assign(maps.get(name)!, compileGeo(d, ctx));
      continue;
    }
    if (d.name !== "map" || !d.args[1]!.startsWith("$")) continue;
    const conf = maps.get(d.args[1]!.slice(1).toLowerCase())! as {
      -readonly [K in keyof MapConf]: MapConf[K];
    };
    conf.source = ctx.value(d, d.args[0]!);
    const exact = new Map<string, ComplexValue>();
    const regexes: { regex: RegExp; value: ComplexValue }[] = [];
    for (const entry of d.block ?? []) {
      const [key, val] = [entry.name, entry.args[0]];
      if (key === "hostnames" || key === "volatile") continue;
      if (val === undefined || entry.args.length > 1) {
        ctx.fail(entry, `invalid number of the map parameters`);
        continue;
      }
      if (key === "default") {
        conf.defaultValue = ctx.value(entry, val);
      } else if (key.startsWith("~")) {
        const caseless = key.startsWith("~*");
        try {
          regexes.push({
            regex: compileRegex(key.slice(caseless ? 2 : 1), caseless),
            value: ctx.value(entry, val),
          });
        } catch (error) {
          if (!(error instanceof ValueError)) throw error;
          ctx.fail(entry, error.message);
        }
      } else {
        exact.set(
          key.startsWith("\\") ? key.slice(1) : key,
          ctx.value(entry, val),
        );
      }
    }
    conf.exact = exact;
    conf.regexes = regexes;
  }
}

/**
 * Names `set` assigns anywhere in the block (nginx registers them at parse
 * time), and the named captures of its regexes.
 *
 * @param block The `http` block's directives.
 * @returns The names, lower case.
 */
export function setNames(
  block: readonly Directive[],
): { set: Set<string>; captures: Set<string> } {
  const set = new Set<string>();
  const captures = new Set<string>();
  const walk = (list: readonly Directive[]): void => {
    for (const d of list) {
      if (d.name === "set" && d.args[0]?.startsWith("$")) {
        set.add(d.args[0].slice(1).toLowerCase());
      }
      if (d.block && d.name !== "types" && d.name !== "map") walk(d.block);
      // Named captures of regexes also become variables; nginx knows them
      // from the regex. They are read from the request's own table.
      if (d.name === "location" || d.name === "rewrite" || d.name === "if") {
        for (const arg of d.args) {
          // PCRE2's three spellings: `(?<n>`, `(?P<n>`, `(?'n'`.
          for (
            const m of arg.matchAll(
              /\(\?(?:P?<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')/g,
            )
          ) {
            captures.add((m[1] ?? m[2])!.toLowerCase());
          }
        }
      }
    }
  };
  walk(block);
  return { set, captures };
}
