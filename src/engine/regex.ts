/**
 * nginx's regular expressions (PCRE) as JavaScript's: the syntax real
 * configurations use is the same (classes, groups, anchors, `(?<name>)`),
 * and PCRE's `(?P<name>…)` is rewritten. Matching is done on the decoded
 * URI as a string, as nginx matches its decoded bytes.
 *
 * @module
 */

import { ValueError } from "./complex_value.ts";

/**
 * Compiles a location, `rewrite`, `if` or `map` regex.
 *
 * @param source The expression as written.
 * @param caseless `~*`: without regard to case.
 * @returns The expression.
 * @throws {ValueError} With nginx's `pcre_compile() failed` message.
 *
 * @example Usage
 * ```ts
 * import { compileRegex } from "./regex.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(compileRegex("^/api/(?P<rest>.*)$", false).exec("/api/x")?.groups?.rest, "x");
 * ```
 */
export function compileRegex(source: string, caseless: boolean): RegExp {
  const translated = source.replaceAll("(?P<", "(?<");
  try {
    return new RegExp(translated, caseless ? "i" : "");
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ValueError(
      `pcre_compile() failed: ${
        why.replace(/^Invalid regular expression: /, "")
      } in "${source}"`,
    );
  }
}
