/**
 * The size PCRE2 10.42 reckons for a pattern's compiled code before it
 * compiles it (pcre2_compile()'s pre-pass, 8-bit code units, LINK_SIZE 2,
 * as Debian's libpcre2-8 that nginx links), so that a pattern whose code
 * would pass PCRE2's 64 KiB bound (`(ab){6000}`, `(?:x{1,9}){5000}`) is
 * refused as nginx refuses it (`regular expression is too large`). The
 * sizes are the opcodes compile_branch() writes for each item; a counted
 * repeat of a group copies the group (pcre2_compile.c, "If previous was a
 * bracket group").
 *
 * @module
 */

import { fixedWidth } from "./pcre_groups.ts";
import type { PcreNode } from "./pcre_tree.ts";

/** PCRE2's LINK_SIZE in Debian's build. */
const LINK = 2;
/** A group's opening and closing opcodes with their links. */
export const BRACKETS = 2 + 2 * LINK;
/** PCRE2's MAX_PATTERN_SIZE for LINK_SIZE 2. */
export const MAX_PATTERN_SIZE = 1 << 16;

/**
 * The pre-pass length of a whole pattern: its brackets, its branches and
 * the final OP_END.
 *
 * @param root The parsed pattern.
 * @returns The code units PCRE2 reckons; over {@linkcode MAX_PATTERN_SIZE}
 * it refuses the pattern.
 */
export function compiledLength(root: PcreNode): number {
  return 1 + groupLength(root, 0, false);
}

/** compile_regex(): brackets, branches, the ALT between them, lookbehind's REVERSE. */
function groupLength(body: PcreNode, skip: number, behind: boolean): number {
  const branches = body.kind === "alt" ? body.branches : [body];
  let length = BRACKETS + skip + (branches.length - 1) * (1 + LINK);
  for (const branch of branches) {
    length += nodeLength(branch);
    if (behind && (fixedWidth(branch) ?? 0) > 0) length += 1 + LINK;
  }
  return length;
}

/**
 * One item's length, a sequence's items summed.
 *
 * @param node A parsed node.
 * @returns The code units PCRE2's pre-pass counts for it.
 */
export function nodeLength(node: PcreNode): number {
  switch (node.kind) {
    case "set":
      return node.code ?? 2;
    case "text":
      // Without UTF each of its UTF-8 bytes is a char of its own.
      return 2 * new TextEncoder().encode(String.fromCharCode(node.code))
        .length;
    case "seq":
      if (node.code !== undefined) return node.code;
      return node.items.reduce((n, x) => n + nodeLength(x), 0);
    case "alt":
      return groupLength(node, 0, false);
    case "group":
      return groupLength(node.body, node.capture === null ? 0 : 2, false);
    case "look":
      return groupLength(node.body, 0, !node.ahead);
    case "anchor":
    case "raw":
      return 1;
    case "backref":
      return 3;
    case "repeat":
      return repeatLength(node.body, node.min, node.max);
  }
}

/** A repeated item: a char or type's repeat opcodes, a class's CR ones, a group copied. */
function repeatLength(body: PcreNode, min: number, max: number): number {
  const item = nodeLength(body);
  if (min === 1 && max === 1) return item;
  const grouped = body.kind === "group" || body.kind === "look" ||
    (body.kind === "seq" && body.code !== undefined);
  if (grouped) {
    // BRAZERO before a group that may be skipped; each further optional
    // copy nests in a BRA with a BRAZERO (the last one not).
    if (min === 0) {
      return max <= 1 || max === Infinity
        ? item + 1
        : item + 1 + (max - 1) * (item + 1 + BRACKETS);
    }
    const copies = min * item;
    return max === Infinity || max === min
      ? copies
      : copies + (max - min) * (item + 1 + BRACKETS) - BRACKETS;
  }
  // The pre-pass never takes back what an item wrote (`[ab]{0}`, `a{0}`).
  if (max === 0) return item;
  if ((body.kind === "set" && item > 2) || body.kind === "backref") {
    const plain = (min === 0 || min === 1) && (max === Infinity || max === 1);
    return item + (plain ? 1 : 5);
  }
  // A char or type: STAR, QUERY, PLUS, UPTO, EXACT with their counts.
  let length: number;
  if (min === 0) length = max === Infinity || max === 1 ? 2 : 4;
  else if (min === 1) length = max === Infinity ? 2 : item + 4;
  else if (max === min) length = 4;
  else length = max === Infinity || max === min + 1 ? 6 : 8;
  return Math.max(item, length);
}

/**
 * PCRE2's length of a class (compile_branch()): one char, one char
 * negated, or a letter and its other case are compiled as a char.
 *
 * @param negate The class is negated.
 * @param literals Its single chars as parsed, `null` with anything else.
 * @returns Its code units.
 */
export function classLength(
  negate: boolean,
  literals: number[] | null,
): number {
  if (literals?.length === 1) return 2;
  if (negate || literals?.length !== 2) return 33;
  const [c, d] = literals as [number, number];
  const other = /[A-Za-z]/.test(String.fromCharCode(c)) ? c ^ 0x20 : c;
  return other !== c && d === other ? 2 : 33;
}
