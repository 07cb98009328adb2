/**
 * An SSI `if` regex, compiled once and kept in a bounded cache. Its text
 * comes from a response body, and the subject from SSI variables: a
 * lookaround or a backreference keeps V8 on its backtracking engine, out
 * of reach of the runtime's linear fallback for excessive backtracks
 * (engine/regex.ts), so `/^(a+)+(?=c)/` on a long value would stall every
 * client. Such a pattern is refused as nginx refuses one PCRE cannot
 * compile: an error line and the `errmsg` text.
 *
 * @module
 */

import { compileRegex, runsLinear, ValueError } from "../engine/mod.ts";

/** Compiled patterns (or their refusals) kept at most. */
export const REGEX_CACHE_SIZE = 64;

const cache = new Map<string, RegExp | string>();

/**
 * The pattern compiled, or the error line's message.
 *
 * @param pattern The text between the slashes, evaluated.
 * @returns The expression, or why it is not run.
 *
 * @example Usage
 * ```ts
 * import { ssiRegex } from "./ssi_regex.ts";
 * import { ok, strictEqual } from "node:assert/strict";
 *
 * ok(ssiRegex("^(a)b") instanceof RegExp);
 * strictEqual(typeof ssiRegex("a(?=b)"), "string");
 * ```
 */
export function ssiRegex(pattern: string): RegExp | string {
  const known = cache.get(pattern);
  if (known !== undefined) return known;
  let made: RegExp | string;
  if (backtrackingOnly(pattern)) {
    made = `pcre_compile() failed: lookarounds and backreferences ` +
      `are not run in SSI in "${pattern}"`;
  } else {
    try {
      made = compileRegex(pattern, false);
      // What PCRE writes without them but JavaScript with: `a++`, `\R`.
      if (!runsLinear(made)) {
        made = `pcre_compile() failed: lookarounds and backreferences ` +
          `are not run in SSI in "${pattern}"`;
      }
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      made = error.message;
    }
  }
  // The oldest goes first: a body cannot grow the cache.
  if (cache.size >= REGEX_CACHE_SIZE) {
    cache.delete(cache.keys().next().value!);
  }
  cache.set(pattern, made);
  return made;
}

/**
 * Whether a pattern has a lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) or a
 * backreference (`\1`…`\9`, `\k<name>`) outside a character class.
 */
function backtrackingOnly(pattern: string): boolean {
  let inClass = false;
  // Bounded by the pattern: each turn moves on one or two characters.
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1];
      if (!inClass && next !== undefined) {
        if ((next >= "1" && next <= "9") || next === "k") return true;
      }
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      // A `]` first in a class is itself (PCRE).
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
    } else if (c === "(" && pattern[i + 1] === "?") {
      const kind = pattern[i + 2];
      if (kind === "=" || kind === "!") return true;
      if (kind === "<" && (pattern[i + 3] === "=" || pattern[i + 3] === "!")) {
        return true;
      }
    }
  }
  return false;
}

/**
 * How many patterns the cache holds, at most {@linkcode REGEX_CACHE_SIZE}.
 *
 * @returns The count.
 *
 * @example Usage
 * ```ts
 * import { cachedRegexes, REGEX_CACHE_SIZE } from "./ssi_regex.ts";
 * import { ok } from "node:assert/strict";
 *
 * ok(cachedRegexes() <= REGEX_CACHE_SIZE);
 * ```
 */
export function cachedRegexes(): number {
  return cache.size;
}
