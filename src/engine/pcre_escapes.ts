/**
 * PCRE2's escapes (`\\x{41}`, `\\101`, `\\cA`, ...) and classes (`[...]`, POSIX
 * names inside), read as PCRE2 10.42 reads them without UTF.
 *
 * @module
 */

import {
  addSet,
  type ByteSet,
  emptySet,
  negated,
  POSIX_CLASSES,
  typeEscape,
} from "./pcre_sets.ts";
import { type Deferred, fail, unsupported } from "./pcre_tree.ts";

/** The pattern, where it is being read, and a refusal waiting for its end. */
export interface Cursor extends Deferred {
  readonly s: string;
  at: number;
}

/** A class as read. */
export interface ClassRead {
  set: ByteSet;
  negate: boolean;
  /** Its single chars as PCRE2 parsed them, `null` with anything else (pcre_size.ts). */
  literals: number[] | null;
}

const isOctal = (c: string | undefined) =>
  c !== undefined && c >= "0" && c <= "7";

/** Escapes PCRE2 knows that the gateway does not run. */
export function otherEscape(c: string, at: number): never {
  if ("KXCpP".includes(c)) {
    return unsupported(`"\\${c}"`, at - 1);
  }
  if (/[A-Za-z0-9]/.test(c)) {
    return fail("unrecognized character follows \\", at);
  }
  throw new Error("unreachable");
}

/**
 * The char an escape stands for (`\n`, `\x41`, `\x{41}`, `\101`, `\cA`,
 * a non-alphanumeric char), or `null` for a class or assertion, with
 * PCRE2's refusals (check_escape()). A digit `1`…`7` here is octal: the
 * caller has taken a backreference (outside a class) first.
 *
 * @param cur The pattern, read from after the escape's letter.
 * @param c The letter after `\`.
 * @returns The char's code, or `null`.
 */
export function escapeChar(
  cur: Cursor,
  c: string,
): number | null {
  const s = cur.s;
  const simple: Record<string, number> = {
    a: 7,
    e: 0x1b,
    f: 0x0c,
    n: 0x0a,
    r: 0x0d,
    t: 0x09,
  };
  if (c in simple) return simple[c]!;
  if (!/[A-Za-z0-9]/.test(c)) return c.charCodeAt(0);
  if ("FlLuU".includes(c)) {
    // Perl's case escapes; `\u`, `\U` only with PCRE2_ALT_BSUX (check_escape()).
    return fail(NOT_PERL, cur.at >= s.length ? null : cur.at);
  }
  if (c === "N") {
    nBrace(cur);
    return null;
  }
  if ((c === "x" || c === "o") && s[cur.at] === "{") {
    return braced(cur, c === "x" ? 16 : 8);
  }
  if (c === "o") {
    return fail(
      "missing opening brace after \\o",
      // At the end PCRE2 steps back onto the `o`.
      cur.at >= s.length ? cur.at - 1 : cur.at,
    );
  }
  if (c === "x") {
    const m = /^[0-9a-fA-F]{0,2}/.exec(s.slice(cur.at))![0];
    cur.at += m.length;
    return m === "" ? 0 : parseInt(m, 16);
  }
  if (c === "c") {
    const next = s[cur.at];
    if (next === undefined) return fail("\\c at end of pattern", null);
    const code = next.charCodeAt(0);
    if (code < 0x20 || code > 0x7e) {
      return fail(
        "\\c must be followed by a printable ASCII character",
        cur.at,
      );
    }
    cur.at++;
    return next.toUpperCase().charCodeAt(0) ^ 0x40;
  }
  if (isOctal(c)) {
    // `\0…` always, `\1`…`\7` in a class or past the groups so far.
    let digits = c;
    while (digits.length < 3 && isOctal(s[cur.at])) digits += s[cur.at++];
    const code = parseInt(digits, 8);
    if (code > 0xff) {
      fail(
        "octal value is greater than \\377 in 8-bit non-UTF-8 mode",
        cur.at >= s.length ? null : cur.at,
      );
    }
    return code;
  }
  return null;
}

/** PCRE2's ERR37. */
const NOT_PERL = "PCRE2 does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u";

/**
 * After `\N`: a `{` must open a quantifier (`\N{2,3}`), as PCRE2's
 * check_escape() reads it: `\N{U+…}` is Unicode mode's only, any other
 * `\N{…}` is Perl's `\N{name}`. The cursor stays after the `N`.
 */
function nBrace(cur: Cursor): void {
  const s = cur.s;
  if (s[cur.at] !== "{") return;
  const at = cur.at >= s.length ? null : cur.at;
  if (s[cur.at + 1] === "U" && s[cur.at + 2] === "+") {
    fail("\\N{U+dddd} is supported only in Unicode (UTF) mode", at);
  }
  const m = /^\{(\d*)(,(\d*))?\}/.exec(s.slice(cur.at));
  if (m === null || m[1] === "") fail(NOT_PERL, at);
  const min = Number(m![1]);
  const max = m![3] === undefined || m![3] === "" ? null : Number(m![3]);
  if (min > 65535 || (max !== null && max > 65535)) {
    fail("number too big in {} quantifier", at);
  }
  if (max !== null && max < min) {
    fail("numbers out of order in {} quantifier", at);
  }
}

/** `\x{hh}` or `\o{ooo}` from its `{`, with PCRE2's refusals. */
function braced(cur: Cursor, base: 8 | 16): number {
  const s = cur.s;
  const digit = base === 16 ? /[0-9a-fA-F]/ : /[0-7]/;
  let p = cur.at + 1;
  const first = p;
  while (p < s.length && digit.test(s[p]!)) p++;
  if (p === first && (p >= s.length || s[p] === "}")) {
    fail(
      "digits missing in \\x{} or \\o{} or \\N{U+}",
      p >= s.length ? null : p,
    );
  }
  if (s[p] !== "}") {
    fail(
      base === 16
        ? "non-hex character in \\x{} (closing brace missing?)"
        : "non-octal character in \\o{} (closing brace missing?)",
      p >= s.length ? s.length - 1 : p,
    );
  }
  cur.at = p + 1;
  const code = parseInt(s.slice(first, p), base);
  if (code > 0xff) {
    fail("character code point value in \\x{} or \\o{} is too large", p);
  }
  return code;
}

/**
 * Where a POSIX item that starts at `at` (`[:`, `[.`, `[=`) has its
 * closing `:]` (or `.]`, `=]`), or -1: PCRE2's check_posix_syntax().
 *
 * @param s The pattern.
 * @param at The `[`.
 * @returns The offset of the terminator before `]`, or -1.
 */
export function posixEnd(s: string, at: number): number {
  const term = s[at + 1];
  if (term !== ":" && term !== "." && term !== "=") return -1;
  for (let p = at + 2; p + 1 < s.length; p++) {
    if (s[p] === "\\" && (s[p + 1] === "]" || s[p + 1] === "\\")) p++;
    else if ((s[p] === "[" && s[p + 1] === term) || s[p] === "]") return -1;
    else if (s[p] === term && s[p + 1] === "]") return p;
  }
  return -1;
}

/**
 * A class from after its `[` to its `]`: its members as written, and
 * whether it is negated (the caller folds case first, as PCRE2).
 */
export function readClass(cur: Cursor, xx: boolean): ClassRead {
  const s = cur.s;
  const set = emptySet();
  let negate = false;
  // PCRE2 skips `\E`, `\Q\E` (and under `(?xx)` spaces and tabs) before
  // and after a leading `^`: the first char after them may be a `]`.
  for (;;) {
    if (s.startsWith("\\E", cur.at)) cur.at += 2;
    else if (s.startsWith("\\Q\\E", cur.at)) cur.at += 4;
    else if (xx && (s[cur.at] === " " || s[cur.at] === "\t")) cur.at++;
    else if (!negate && s[cur.at] === "^") {
      [negate, cur.at] = [true, cur.at + 1];
    } else break;
  }
  let first = true;
  let quoted = false;
  /** The last single char added, which a `-` may make a range from. */
  let last: number | null = null;
  let literals: number[] | null = [];
  const literal = (code: number) => {
    literals?.push(code);
    return code;
  };
  for (;;) {
    const c = s[cur.at];
    if (c === undefined) {
      return fail("missing terminating ] for character class", null);
    }
    if (quoted) {
      if (c === "\\" && s[cur.at + 1] === "E") {
        quoted = false;
        cur.at += 2;
        continue;
      }
      last = literal(quotedChar(cur, set, c.charCodeAt(0)));
      cur.at++;
      first = false;
      continue;
    }
    if (c === "]" && !first) break;
    first = false;
    if (xx && (c === " " || c === "\t")) {
      cur.at++;
      continue;
    }
    const posix = c === "[" ? posixEnd(s, cur.at) : -1;
    if (c === "[" && posix < 0) {
      // `[` that opens no POSIX item is itself.
      set.bits[last = literal(0x5b)] = 1;
      cur.at++;
      continue;
    }
    if (posix >= 0) {
      if (s[cur.at + 1] !== ":") {
        fail("POSIX collating elements are not supported", cur.at);
      }
      const name = s.slice(cur.at + 2, posix);
      const m = ["", /^\^/.test(name) ? "^" : "", name.replace(/^\^/, "")];
      const make = Object.hasOwn(POSIX_CLASSES, m[2]!)
        ? POSIX_CLASSES[m[2]!]
        : undefined;
      if (make === undefined) {
        fail("unknown POSIX class name", cur.at + 2 + m[1]!.length);
      }
      m[0] = s.slice(cur.at, posix + 2);
      addSet(set, m[1] === "^" ? negated(make!()) : make!());
      literals = null;
      cur.at += m[0].length;
      if (
        s[cur.at] === "-" && s[cur.at + 1] !== "]" &&
        s[cur.at + 1] !== undefined
      ) {
        fail("invalid range in character class", cur.at);
      }
      last = null;
      continue;
    }
    // Under `(?xx)` spaces and tabs may stand between `-` and the range's end.
    let toAt = cur.at + 1;
    while (xx && (s[toAt] === " " || s[toAt] === "\t")) toAt++;
    if (
      c === "-" && last !== null && s[toAt] !== "]" && s[toAt] !== undefined
    ) {
      if (/^\[:\^?[a-z]+:\]/.test(s.slice(toAt))) {
        fail("invalid range in character class", toAt + 1);
      }
      cur.at = toAt;
      const to = classItem(cur, true);
      if (to === null || typeof to !== "number") {
        fail(
          "invalid range in character class",
          cur.at - (typeof to === "object" && to !== null ? 0 : 0),
        );
      }
      if ((to as number) < last) {
        fail("range out of order in character class", cur.at - 1);
      }
      for (let b = last + 1; b <= (to as number); b++) set.bits[b] = 1;
      // `[a-a]` is PCRE2's one char.
      if (to !== last) literals = null;
      last = null;
      continue;
    }
    if (c === "\\" && s[cur.at + 1] === "Q") {
      quoted = true;
      cur.at += 2;
      continue;
    }
    if (c === "\\" && s[cur.at + 1] === "E") {
      cur.at += 2;
      continue;
    }
    const item = classItem(cur, false);
    if (typeof item === "number") set.bits[last = literal(item)] = 1;
    else if (item !== null) {
      literals = null;
      if (s[cur.at] === "-" && s[cur.at + 1] !== "]") {
        fail("invalid range in character class", cur.at);
      }
      addSet(set, item);
      last = null;
    }
  }
  cur.at++;
  return { set, negate, literals };
}

/** Adds a `\Q…\E` char to a class; refuses one above 0x7F (text). */
function quotedChar(cur: Cursor, set: ByteSet, code: number): number {
  if (code > 0x7f) {
    unsupported(
      "a non-ASCII char in a class (nginx matches one of its UTF-8 bytes)",
      cur.at,
    );
  }
  set.bits[code] = 1;
  return code;
}

/** One class item at the cursor: a char, a type's set. */
function classItem(cur: Cursor, rangeEnd: boolean): number | ByteSet | null {
  const s = cur.s;
  const c = s[cur.at]!;
  cur.at++;
  if (c !== "\\") {
    const code = c.charCodeAt(0);
    if (code > 0x7f) {
      unsupported(
        "a non-ASCII char in a class (nginx matches one of its UTF-8 bytes)",
        cur.at - 1,
      );
    }
    return code;
  }
  const e = s[cur.at];
  if (e === undefined) return fail("\\ at end of pattern", null);
  const at = cur.at;
  cur.at++;
  if (e === "b") return 0x08;
  if (e.charCodeAt(0) > 0x7f) {
    unsupported(
      "a non-ASCII char in a class (nginx matches one of its UTF-8 bytes)",
      at,
    );
  }
  // In a class `\8` and `\9` are the digits (PCRE2).
  if (e === "8" || e === "9") return e.charCodeAt(0);
  const code = escapeChar(cur, e);
  if (code !== null) return code;
  const set = typeEscape(e);
  if (set !== null && e !== "N") {
    if (rangeEnd) fail("invalid range in character class", cur.at);
    return set;
  }
  // In a class `\g` is the letter (check_escape()).
  if (e === "g") return 0x67;
  if (e === "N") {
    return fail(
      "\\N is not supported in a class",
      cur.at >= s.length ? null : cur.at,
    );
  }
  if ("BRXAzZGkKC".includes(e)) {
    return fail("escape sequence is invalid in character class", at);
  }
  return otherEscape(e, at);
}

/** PCRE2's MAX_GROUP_NUMBER. */
export const MAX_GROUP = 65535;

/**
 * The number of `\g{n}`, `\g{-n}`, `\g{+n}`, `\gn`, `\g-n` (cursor after
 * `g`), with PCRE2's refusals (check_escape(), read_number()), or `null`
 * (a name follows); a refusal of a braced one is named at its `{`.
 *
 * @param cur The pattern, read from after the `g`.
 * @param count The groups opened so far.
 * @returns The group's number, or `null`.
 */
export function groupNumber(cur: Cursor, count: number): number | null {
  const s = cur.s;
  const braced = s[cur.at] === "{";
  const m = /^([+-]?)(\d+)/.exec(s.slice(cur.at + (braced ? 1 : 0)));
  if (m === null) return null;
  const from = cur.at + (braced ? 1 : 0);
  const where = (end: number) => braced ? cur.at : end >= s.length ? null : end;
  // Digits read up to the one past the bound.
  let n = 0;
  for (let i = 0; i < m[2]!.length; i++) {
    n = n * 10 + Number(m[2]![i]);
    const bound = m[1] === "+" ? MAX_GROUP - count : MAX_GROUP;
    if (n > bound) {
      fail(
        "subpattern number is too big",
        where(from + m[1]!.length + i + 1),
      );
    }
  }
  const end = from + m[0].length;
  if (m[1] !== "" && n === 0) {
    fail("a relative value of zero is not allowed", where(end));
  }
  if (m[1] === "-" && n > count) {
    fail("reference to non-existent subpattern", where(end));
  }
  if (braced && s[end] !== "}") {
    fail(
      "\\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number",
      cur.at,
    );
  }
  cur.at = braced ? end + 1 : end;
  if (m[1] === "+") n += count;
  else if (m[1] === "-") n = count + 1 - n;
  if (n <= 0) {
    fail("reference to non-existent subpattern", where(cur.at));
  }
  return n;
}
