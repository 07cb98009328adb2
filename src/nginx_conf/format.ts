/**
 * A parsed configuration as nginx.conf text again (`--print-config`, as
 * `nginx -T` shows what nginx runs): includes already in place, one
 * directive a line, blocks indented, arguments quoted where the lexer
 * needs it, so the text parses back to the same tree.
 *
 * @module
 */

import type { Directive } from "./parser.ts";

/** An argument as the lexer reads it back. */
function quote(arg: string): string {
  if (arg !== "" && !/[\s;{}"'#\\]/.test(arg)) return arg;
  return `"${arg.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/**
 * Formats directives as nginx.conf text.
 *
 * @param directives The directives.
 * @param indent The indentation of this level.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { formatConf } from "./format.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(
 *   formatConf([{ name: "root", args: ["my html"], file: "f", line: 1 }]),
 *   'root "my html";\n',
 * );
 * ```
 */
export function formatConf(
  directives: readonly Directive[],
  indent = "",
): string {
  let out = "";
  for (const d of directives) {
    const words = [d.name, ...d.args].map(quote).join(" ");
    if (d.block === undefined) {
      out += `${indent}${words};\n`;
    } else {
      out += `${indent}${words} {\n${
        formatConf(d.block, indent + "    ")
      }${indent}}\n`;
    }
  }
  return out;
}
