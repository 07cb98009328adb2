/**
 * The variables a configuration declares, compiled before anything reads
 * them: `map`, `geo` and `split_clients` blocks (declared first, then filled, since a map's
 * values may read other maps), and the names `set` and named captures
 * make (nginx registers them at parse time).
 *
 * @module
 */

import {
  addHostnameKey,
  compileRegex,
  type ComplexValue,
  constantValue,
  hostnameTable,
  type MapConf,
  sortWildcards,
  ValueError,
  Variables,
} from "../engine/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import { compileGeo } from "./compile_geo.ts";
import { compileSplitClients } from "./compile_split_clients.ts";
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
    if (d.name !== "map" && d.name !== "geo" && d.name !== "split_clients") {
      continue;
    }
    // map's and split_clients' second argument; geo's last
    // (`geo [$address] $variable`).
    const name = d.args.at(-1)!;
    if (!name.startsWith("$")) {
      ctx.fail(d, `invalid variable name "${name}"`);
      continue;
    }
    // ngx_http_add_variable: a variable nginx keeps read-only is no map's.
    const refusal = Variables.assignRefusal(name.slice(1));
    if (refusal?.startsWith("the duplicate ")) {
      ctx.fail(d, refusal);
      continue;
    }
    // Filled by compileMaps: a map's values may read other maps. A geo's
    // lone `default` is known now, for every value compiled after.
    const only = d.name === "geo" && d.block?.length === 1
      ? d.block[0]!
      : undefined;
    const fixed = only?.name === "default" && only.args.length === 1
      ? only.args[0]!
      : undefined;
    maps.set(name.slice(1).toLowerCase(), {
      source: constantValue(""),
      exact: new Map(),
      regexes: [],
      defaultValue: constantValue(""),
      ...(fixed === undefined ? {} : { fixed }),
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
    const declared = d.args.at(-1)?.slice(1).toLowerCase() ?? "";
    // A name declareMaps refused.
    if (!maps.has(declared)) continue;
    if (d.name === "geo" && d.args.at(-1)!.startsWith("$")) {
      const name = d.args.at(-1)!.slice(1).toLowerCase();
      Object.assign(maps.get(name)!, compileGeo(d, ctx));
      continue;
    }
    if (d.name === "split_clients" && d.args[1]!.startsWith("$")) {
      const name = d.args[1]!.slice(1).toLowerCase();
      Object.assign(maps.get(name)!, compileSplitClients(d, ctx));
      continue;
    }
    if (d.name !== "map" || !d.args[1]!.startsWith("$")) continue;
    const conf = maps.get(d.args[1]!.slice(1).toLowerCase())! as {
      -readonly [K in keyof MapConf]: MapConf[K];
    };
    conf.source = ctx.value(d, d.args[0]!);
    const keys = hostnameTable<ComplexValue>();
    const regexes: { regex: RegExp; value: ComplexValue }[] = [];
    // ngx_http_map: `hostnames` and `volatile` alone on a line are flags;
    // `hostnames` makes the keys after it wildcard keys.
    let hostnames = false;
    let hasDefault = false;
    for (const entry of d.block ?? []) {
      const [key, val] = [entry.name, entry.args[0]];
      if (entry.args.length === 0 && key === "hostnames") {
        hostnames = true;
        continue;
      }
      if (entry.args.length === 0 && key === "volatile") continue;
      if (val === undefined || entry.args.length > 1) {
        ctx.fail(entry, `invalid number of the map parameters`);
        continue;
      }
      if (key === "default") {
        if (hasDefault) {
          ctx.fail(entry, "duplicate default map parameter");
          continue;
        }
        hasDefault = true;
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
        const name = key.startsWith("\\") ? key.slice(1) : key;
        const added = addHostnameKey(
          keys,
          name,
          ctx.value(entry, val),
          hostnames,
        );
        if (added === "busy") {
          ctx.fail(entry, `conflicting parameter "${name}"`);
        } else if (added === "declined") {
          ctx.fail(entry, `invalid hostname or wildcard "${name}"`);
        }
      }
    }
    sortWildcards(keys);
    conf.exact = keys.exact;
    if (hostnames) conf.wildcards = keys.wildcards;
    conf.regexes = regexes;
  }
}

/**
 * Names `set` assigns anywhere in the block (nginx registers them at parse
 * time), and the named captures of its regexes. A capture named after a
 * variable nginx keeps read-only (`(?<uri>…)`) is refused as
 * `ngx_http_add_variable` refuses it.
 *
 * @param block The `http` block's directives.
 * @param fail Where such a refusal goes.
 * @returns The names, lower case.
 */
export function setNames(
  block: readonly Directive[],
  fail: (d: Directive, message: string) => void = () => {},
): { set: Set<string>; captures: Set<string> } {
  const set = new Set<string>();
  const captures = new Set<string>();
  const walk = (list: readonly Directive[]): void => {
    for (const d of list) {
      if (d.name === "set" && d.args[0]?.startsWith("$")) {
        set.add(d.args[0].slice(1).toLowerCase());
      }
      if (d.block && d.name !== "types" && d.name !== "map") walk(d.block);
      // Named captures of regexes also become variables: nginx knows them
      // from every regex ngx_http_regex_compile reads. They are read from
      // the request's own table. PCRE2's three spellings: `(?<n>`,
      // `(?P<n>`, `(?'n'`.
      for (const regex of regexesOf(d)) {
        for (
          const m of regex.matchAll(
            /\(\?(?:P?<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')/g,
          )
        ) {
          const name = (m[1] ?? m[2])!;
          const refusal = Variables.assignRefusal(name);
          if (refusal?.startsWith("the duplicate ")) fail(d, refusal);
          captures.add(name.toLowerCase());
        }
      }
    }
  };
  walk(block);
  return { set, captures };
}

/**
 * The regexes of a directive that ngx_http_regex_compile reads, whose
 * named captures become variables: `location`'s, `rewrite`'s and `if`'s,
 * `server_name`'s `~` names, a `map`'s `~` keys, and the `~` first
 * argument of `proxy_redirect`, `proxy_cookie_domain` and
 * `proxy_cookie_path`.
 */
function regexesOf(d: Directive): readonly string[] {
  switch (d.name) {
    case "location":
    case "rewrite":
    case "if":
      return d.args;
    case "server_name":
      return d.args.filter((a) => a.startsWith("~"));
    case "map":
      return (d.block ?? []).map((e) => e.name).filter((k) =>
        k.startsWith("~")
      );
    case "proxy_redirect":
    case "proxy_cookie_domain":
    case "proxy_cookie_path":
      return d.args[0]?.startsWith("~") ? [d.args[0]] : [];
    default:
      return [];
  }
}
