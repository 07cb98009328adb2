/**
 * nginx's regular expressions (PCRE) as JavaScript's: the syntax real
 * configurations use is the same (classes, groups, anchors, `(?<name>)`),
 * and PCRE's `(?P<name>…)` is rewritten. Matching is done on the decoded
 * URI as a string, as nginx matches its decoded bytes.
 *
 * A client chooses the text these expressions run on (URI, `Host`, any
 * header a `map` reads), so an expression that backtracks without bound
 * (`^(a+)+$`, `^/(.*)/(.*)/(.*)$` on a long URI) would stall the one event
 * loop for every client. nginx bounds PCRE with its match limit and answers
 * 500 (`pcre2_match() failed: -47`); V8 has no such limit, but the gateway
 * runs with `--enable-experimental-regexp-engine-on-excessive-backtracks`
 * (scripts/compile.ts), which finishes such a match in linear time. That
 * engine takes no `i` flag, so a caseless (`~*`) expression is compiled
 * with both cases of each ASCII letter spelled out, as PCRE without UTF
 * folds only ASCII. Backreferences and lookarounds keep the backtracking
 * engine alone (the linear one cannot run them).
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
 * strictEqual(compileRegex("\\.JS$", true).test("/app.js"), true);
 * ```
 */
export function compileRegex(source: string, caseless: boolean): RegExp {
  const translated = source.replaceAll("(?P<", "(?<");
  let regex: RegExp;
  try {
    regex = new RegExp(translated, caseless ? "i" : "");
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ValueError(
      `pcre_compile() failed: ${
        why.replace(/^Invalid regular expression: /, "")
      } in "${source}"`,
    );
  }
  if (!caseless) return regex;
  const folded = caselessSource(translated);
  if (folded === null) return regex;
  try {
    return new RegExp(folded, "");
  } catch {
    // A construct the spelling does not know: the `i` flag, as written.
    return regex;
  }
}

/** `a` → `A`, `A` → `a`; `null` for anything but an ASCII letter. */
function otherCase(code: number): string | null {
  if (code >= 0x61 && code <= 0x7a) return String.fromCharCode(code - 32);
  if (code >= 0x41 && code <= 0x5a) return String.fromCharCode(code + 32);
  return null;
}

/** The code a `\xHH` or `\uHHHH` escape at `at` stands for, and its length. */
function hexEscape(source: string, at: number): [number, number] | null {
  const kind = source[at + 1];
  const digits = kind === "x" ? 2 : kind === "u" ? 4 : 0;
  const hex = source.slice(at + 2, at + 2 + digits);
  if (digits === 0 || !/^[0-9a-fA-F]+$/.test(hex) || hex.length !== digits) {
    return null;
  }
  return [parseInt(hex, 16), 2 + digits];
}

/**
 * The other case of every ASCII letter in the range `lo`..`hi` (codes), as
 * class items.
 */
function otherCaseRange(lo: number, hi: number): string {
  let out = "";
  for (const [from, to, shift] of [[0x61, 0x7a, -32], [0x41, 0x5a, 32]]) {
    const a = Math.max(lo, from!);
    const b = Math.min(hi, to!);
    if (a > b) continue;
    out += String.fromCharCode(a + shift!);
    if (b > a) out += `-${String.fromCharCode(b + shift!)}`;
  }
  return out;
}

/**
 * The length of the class item at `at` (an escape or one char), and the
 * code it stands for when it is one char (`null` for `\d` and the like).
 */
function classAtom(source: string, at: number): [number, number | null] {
  if (source[at] !== "\\") return [1, source.charCodeAt(at)];
  const hex = hexEscape(source, at);
  if (hex !== null) return [hex[1], hex[0]];
  if (source[at + 1] === "c") return [3, null];
  return [2, null];
}

/**
 * A source whose every ASCII letter matches both cases without the `i`
 * flag; `null` when it has a backreference (what it matches would depend
 * on the case the group matched) or ends inside a class.
 */
export function caselessSource(source: string): string | null {
  let out = "";
  let at = 0;
  while (at < source.length) {
    const c = source[at]!;
    if (c === "\\") {
      const next = source[at + 1] ?? "";
      if (/[1-9]/.test(next) || (next === "k" && source[at + 2] === "<")) {
        return null;
      }
      const hex = hexEscape(source, at);
      if (hex !== null) {
        const other = otherCase(hex[0]);
        const text = source.slice(at, at + hex[1]);
        out += other === null ? text : `[${text}${other}]`;
        at += hex[1];
      } else {
        const length = next === "c" ? 3 : 2;
        out += source.slice(at, at + length);
        at += length;
      }
    } else if (c === "[") {
      const end = foldClass(source, at);
      if (end === null) return null;
      out += end[0];
      at = end[1];
    } else if (
      c === "(" && source.startsWith("?<", at + 1) &&
      source[at + 3] !== "=" && source[at + 3] !== "!"
    ) {
      // A group's name is not matched text.
      const close = source.indexOf(">", at);
      if (close < 0) return null;
      out += source.slice(at, close + 1);
      at = close + 1;
    } else {
      const other = otherCase(source.charCodeAt(at));
      out += other === null ? c : `[${c}${other}]`;
      at++;
    }
  }
  return out;
}

/** The class starting at `at` with the other case of its letters added. */
function foldClass(source: string, at: number): [string, number] | null {
  let i = at + 1;
  if (source[i] === "^") i++;
  const start = i;
  let extra = "";
  // JavaScript's `[]` is an empty class: `]` right after `[` ends it.
  while (i < source.length && source[i] !== "]") {
    const [length, code] = classAtom(source, i);
    const dash = i + length;
    if (
      source[dash] === "-" && dash + 1 < source.length &&
      source[dash + 1] !== "]"
    ) {
      const [toLength, to] = classAtom(source, dash + 1);
      if (code !== null && to !== null) extra += otherCaseRange(code, to);
      // `[\d-z]` is `\d`, `-` and `z` (Annex B).
      else if (code !== null) extra += otherCaseRange(code, code);
      else if (to !== null) extra += otherCaseRange(to, to);
      i = dash + 1 + toLength;
      continue;
    }
    if (code !== null) extra += otherCaseRange(code, code);
    i += length;
  }
  if (i >= source.length) return null;
  // The added letters go first; a `-` that began the class is escaped so
  // it does not join the last of them into a range.
  const body = source[start] === "-"
    ? `\\${source.slice(start, i)}`
    : source.slice(start, i);
  return [`${source.slice(at, start)}${extra}${body}]`, i + 1];
}
