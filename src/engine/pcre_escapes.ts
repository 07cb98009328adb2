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
import { fail, unsupported } from "./pcre_tree.ts";

/** The pattern and where it is being read. */
export interface Cursor {
  readonly s: string;
  at: number;
}

/** A class as read. */
export interface ClassRead {
  set: ByteSet;
  negate: boolean;
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
 * a non-alphanumeric char), or `null` for a class or assertion.
 */
export function escapeChar(
  cur: Cursor,
  c: string,
  at: number,
  inClass: boolean,
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
  if (c === "x") {
    if (s[cur.at] === "{") {
      const m = /^\{([0-9a-fA-F]*)\}/.exec(s.slice(cur.at));
      if (m === null || m[1] === "") {
        // PCRE2 10.42 takes `\x{` without hex and `}` as `x{`.
        return fail("unsupported escape", at);
      }
      cur.at += m[0].length;
      const code = parseInt(m[1]!, 16);
      if (code > 0xff) {
        fail(
          "character code point value in \\x{} or \\o{} is too large",
          cur.at - 1,
        );
      }
      return code;
    }
    const m = /^[0-9a-fA-F]{0,2}/.exec(s.slice(cur.at))![0];
    cur.at += m.length;
    return m === "" ? 0 : parseInt(m, 16);
  }
  if (c === "o" && s[cur.at] === "{") {
    const m = /^\{([0-7]+)\}/.exec(s.slice(cur.at));
    if (m === null) return unsupported("\\o{…} other than octal digits", at);
    cur.at += m[0].length;
    const code = parseInt(m[1]!, 8);
    if (code > 0xff) {
      fail(
        "character code point value in \\x{} or \\o{} is too large",
        cur.at - 1,
      );
    }
    return code;
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
  if (c === "0" || (inClass && isOctal(c))) {
    let digits = c;
    while (digits.length < 3 && isOctal(s[cur.at])) digits += s[cur.at++];
    return parseInt(digits, 8) & 0xff;
  }
  if (c >= "1" && c <= "7") {
    // Outside a class, `\nnn` past the groups so far is octal.
    let digits = c;
    while (digits.length < 3 && isOctal(s[cur.at])) digits += s[cur.at++];
    return parseInt(digits, 8) & 0xff;
  }
  return null;
}

/**
 * A class from after its `[` to its `]`: its members as written, and
 * whether it is negated (the caller folds case first, as PCRE2).
 */
export function readClass(cur: Cursor, xx: boolean): ClassRead {
  const s = cur.s;
  const set = emptySet();
  let negate = false;
  if (s[cur.at] === "^") [negate, cur.at] = [true, cur.at + 1];
  let first = true;
  let quoted = false;
  /** The last single char added, which a `-` may make a range from. */
  let last: number | null = null;
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
      last = quotedChar(cur, set, c.charCodeAt(0));
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
    if (c === "[" && /^\[[:.=]/.test(s.slice(cur.at))) {
      const m = /^\[:(\^?)([a-z]+):\]/.exec(s.slice(cur.at));
      if (m === null) {
        if (/^\[[.=]/.test(s.slice(cur.at))) {
          fail("POSIX collating elements are not supported", cur.at);
        }
        // `[:` without its `:]`: a literal `[`.
        set.bits[last = 0x5b] = true;
        cur.at++;
        continue;
      }
      const make = POSIX_CLASSES[m[2]!];
      if (make === undefined) {
        fail("unknown POSIX class name", cur.at + 2 + m[1]!.length);
      }
      addSet(set, m[1] === "^" ? negated(make!()) : make!());
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
    if (
      c === "-" && last !== null && s[cur.at + 1] !== "]" &&
      s[cur.at + 1] !== undefined
    ) {
      const toAt = cur.at + 1;
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
      for (let b = last + 1; b <= (to as number); b++) set.bits[b] = true;
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
    if (typeof item === "number") set.bits[last = item] = true;
    else if (item !== null) {
      if (s[cur.at] === "-" && s[cur.at + 1] !== "]") {
        fail("invalid range in character class", cur.at);
      }
      addSet(set, item);
      last = null;
    }
  }
  cur.at++;
  return { set, negate };
}

/** Adds a `\Q…\E` char to a class; refuses one above 0x7F (text). */
function quotedChar(cur: Cursor, set: ByteSet, code: number): number {
  if (code > 0x7f) {
    unsupported(
      "a non-ASCII char in a class (nginx matches one of its UTF-8 bytes)",
      cur.at,
    );
  }
  set.bits[code] = true;
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
  const code = escapeChar(cur, e, at, true);
  if (code !== null) return code;
  const set = typeEscape(e);
  if (set !== null && e !== "N") {
    if (rangeEnd) fail("invalid range in character class", cur.at);
    return set;
  }
  if ("BRXNAzZGgkKQE".includes(e)) {
    return fail("escape sequence is invalid in character class", at);
  }
  return otherEscape(e, at);
}
