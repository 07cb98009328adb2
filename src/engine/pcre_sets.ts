/**
 * Character sets of PCRE2 without UTF, as nginx compiles its expressions:
 * a set is which of the 256 byte values it holds, and whether it also takes
 * what lies above them (`wide`: a negated class, `\D`, `.`), since the
 * gateway's subjects are text and a char above 0xFF is what such a set
 * takes in nginx's bytes. The character types are PCRE2's default "C"
 * locale tables (pcre2_chartables.c.dist; nginx makes no tables of its
 * own): ASCII only.
 *
 * @module
 */

/** Bytes 0-255 held by a set, and whether chars above 0xFF are too. */
export interface ByteSet {
  /** `bits[b]` is 1: byte `b` is in the set. */
  bits: Uint8Array;
  /** Chars above 0xFF are in the set (a negated class, `\D`, `.`). */
  wide: boolean;
  /** Its JavaScript source once written ({@linkcode jsSet}); a set is not changed once read. */
  js?: string;
}

/** An empty set. */
export function emptySet(): ByteSet {
  return { bits: new Uint8Array(256), wide: false };
}

/** The set of the bytes `test` accepts. */
function setOf(test: (b: number) => boolean): ByteSet {
  const set = emptySet();
  for (let b = 0; b < 256; b++) set.bits[b] = test(b) ? 1 : 0;
  return set;
}

/** The same set negated: the other bytes, and chars above 0xFF flipped. */
export function negated(set: ByteSet): ByteSet {
  return { bits: set.bits.map((x) => x ^ 1), wide: !set.wide };
}

/** Adds `from` into `into`. */
export function addSet(into: ByteSet, from: ByteSet): void {
  for (let b = 0; b < 256; b++) into.bits[b]! |= from.bits[b]!;
  if (from.wide) into.wide = true;
}

/** The set with the other case of every ASCII letter added (PCRE2_CASELESS). */
export function folded(set: ByteSet): ByteSet {
  const out = { bits: set.bits.slice(), wide: set.wide };
  for (let b = 0x41; b <= 0x5a; b++) {
    if (set.bits[b] || set.bits[b + 32]) out.bits[b] = out.bits[b + 32] = 1;
  }
  return out;
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isUpper = (b: number) => b >= 0x41 && b <= 0x5a;
const isLower = (b: number) => b >= 0x61 && b <= 0x7a;
const isAlnum = (b: number) => isDigit(b) || isUpper(b) || isLower(b);
const isSpace = (b: number) => (b >= 0x09 && b <= 0x0d) || b === 0x20;
const isGraph = (b: number) => b >= 0x21 && b <= 0x7e;

/**
 * The POSIX classes PCRE2 knows inside `[...]` (`[:alpha:]`), from its
 * "C" tables.
 */
export const POSIX_CLASSES: Readonly<Record<string, () => ByteSet>> = {
  alpha: () => setOf((b) => isUpper(b) || isLower(b)),
  lower: () => setOf(isLower),
  upper: () => setOf(isUpper),
  alnum: () => setOf(isAlnum),
  ascii: () => setOf((b) => b < 0x80),
  blank: () => setOf((b) => b === 0x09 || b === 0x20),
  cntrl: () => setOf((b) => b < 0x20 || b === 0x7f),
  digit: () => setOf(isDigit),
  graph: () => setOf(isGraph),
  print: () => setOf((b) => b >= 0x20 && b <= 0x7e),
  punct: () => setOf((b) => isGraph(b) && !isAlnum(b)),
  space: () => setOf(isSpace),
  word: () => setOf((b) => isAlnum(b) || b === 0x5f),
  xdigit: () =>
    setOf((b) =>
      isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
    ),
};

/**
 * The set a type escape stands for (`\d`, `\s`, `\h`, ...; upper case
 * negated), or `null` for any other letter. `\s` is PCRE2's (VT included,
 * no U+00A0 as JavaScript's), `\h` and `\v` its horizontal and vertical
 * space without UTF.
 */
export function typeEscape(letter: string): ByteSet | null {
  const lower = letter.toLowerCase();
  const base = lower === "d"
    ? setOf(isDigit)
    : lower === "w"
    ? POSIX_CLASSES.word!()
    : lower === "s"
    ? setOf(isSpace)
    : lower === "h"
    ? setOf((b) => b === 0x09 || b === 0x20 || b === 0xa0)
    : lower === "v"
    ? setOf((b) => (b >= 0x0a && b <= 0x0d) || b === 0x85)
    : lower === "n" && letter === "N"
    ? negated(setOf((b) => b === 0x0a))
    : null;
  if (base === null) return null;
  return letter === lower || letter === "N" ? base : negated(base);
}

/** One char as JavaScript regex source (no `u` flag), inside a class or not. */
export function jsChar(code: number): string {
  if (isAlnum(code) || code === 0x5f || code === 0x20) {
    return String.fromCharCode(code);
  }
  // Any other printable ASCII char escaped is itself (an identity escape).
  if (isGraph(code)) return `\\${String.fromCharCode(code)}`;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/** A set as JavaScript regex source: a char, a class or a negated class. */
export function jsSet(set: ByteSet): string {
  return set.js ??= writeSet(set);
}

function writeSet(set: ByteSet): string {
  const members = set.wide ? set.bits.map((x) => x ^ 1) : set.bits;
  let body = "";
  let count = 0;
  for (let b = 0; b < 256; b++) {
    if (!members[b]) continue;
    let end = b;
    while (end + 1 < 256 && members[end + 1]) end++;
    count += end - b + 1;
    body += end === b
      ? jsChar(b)
      : end === b + 1
      ? jsChar(b) + jsChar(end)
      : `${jsChar(b)}-${jsChar(end)}`;
    b = end;
  }
  if (set.wide) return count === 0 ? "[\\s\\S]" : `[^${body}]`;
  if (count === 1) return body;
  return count === 0 ? "[^\\s\\S]" : `[${body}]`;
}
