/**
 * `geo [$address] $variable { … }` (`ngx_http_geo_block`): the block's
 * entries read in order into a table (`access/`), with nginx's warnings and
 * errors at the entry's line. The variable is evaluated like a `map`'s.
 *
 * @module
 */

import { GeoTable } from "../access/mod.ts";
import type { ComplexValue, MapConf } from "../engine/mod.ts";
import type { Directive } from "./parser.ts";

/** What compiling a `geo` block reports to, and compiles values with. */
export interface GeoCompiler {
  fail(d: Directive, message: string): void;
  warn(d: Directive, message: string): void;
  value(d: Directive, text: string): ComplexValue;
}

/**
 * Compiles one `geo` block into the fields of its variable.
 *
 * @param d The `geo` directive (its variable name already checked).
 * @param c Where errors and warnings go, and the value compiler.
 * @returns The variable's source and table.
 */
export function compileGeo(
  d: Directive,
  c: GeoCompiler,
): Pick<MapConf, "source" | "geo"> {
  const sourceText = d.args.length === 2 ? d.args[0]! : "$remote_addr";
  if (!sourceText.startsWith("$")) {
    c.fail(d, `invalid variable name "${sourceText}"`);
  }
  const block = d.block ?? [];
  // `ranges` mode when it comes before any network (`proxy` may precede it).
  const first = block.find((e) =>
    e.name !== "proxy" && !(e.name === "proxy_recursive" && e.args.length === 0)
  );
  const table = new GeoTable(
    first?.name === "ranges" && first.args.length === 0,
  );
  let entries = 0;
  for (const entry of block) {
    const [key, args] = [entry.name, entry.args];
    if (args.length === 0 && key === "ranges") {
      // ngx_http_geo: only before any network (the tree) exists.
      if (entries > 0) {
        c.fail(
          entry,
          'the "ranges" directive must be the first directive inside "geo" block',
        );
      }
      continue;
    }
    if (args.length === 0 && key === "proxy_recursive") {
      table.proxyRecursive = true;
      continue;
    }
    if (args.length !== 1) {
      c.fail(entry, "invalid number of the geo parameters");
      continue;
    }
    if (key !== "proxy") entries++;
    const result = key === "proxy"
      ? table.addProxy(args[0]!)
      : key === "delete"
      ? table.delete(args[0]!)
      : table.add(key, args[0]!);
    if (!result.ok) c.fail(entry, result.error);
    else if (result.warning !== null) c.warn(entry, result.warning);
  }
  const source = c.value(d, sourceText);
  const forwardedFor = table.hasProxies
    ? c.value(d, "$http_x_forwarded_for")
    : null;
  return {
    source,
    geo: {
      lookup: (address, forwarded) =>
        table.lookup(table.realAddress(address, forwarded)),
      forwardedFor,
    },
  };
}
