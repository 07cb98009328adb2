/**
 * Reads a regex as nginx 1.22 hands it to PCRE2 (no UTF, no UCP; caseless
 * for `~*`) into a tree the gateway can write as JavaScript
 * (regex.ts). Every construct is read as PCRE2 reads it: what PCRE2
 * refuses is refused with its message (nginx's `pcre2_compile() failed`),
 * and what PCRE2 accepts but JavaScript cannot run the same way is refused
 * with the reason ({@linkcode PcreError}'s `unsupported`), never run as
 * something else.
 *
 * @module
 */

import {
  type ByteSet,
  emptySet,
  folded,
  negated,
  typeEscape,
} from "./pcre_sets.ts";
import { type Frame, GroupChecks, minWidth } from "./pcre_groups.ts";
import { readVerb, startsWithOption } from "./pcre_verbs.ts";
import {
  type Cursor,
  escapeChar,
  groupNumber,
  MAX_GROUP,
  otherEscape,
  posixEnd,
  readClass,
} from "./pcre_escapes.ts";
import { defer, fail, type PcreNode, unsupported } from "./pcre_tree.ts";
import {
  BRACKETS,
  classLength,
  compiledLength,
  MAX_PATTERN_SIZE,
  nodeLength,
} from "./pcre_size.ts";

export { PcreError, type PcreNode } from "./pcre_tree.ts";

/** The inline options the gateway follows (PCRE2's letters). */
interface Options {
  i: boolean;
  s: boolean;
  x: boolean;
  xx: boolean;
  n: boolean;
  U: boolean;
}

/** A parsed expression. */
export interface ParsedPcre {
  /** The tree. */
  root: PcreNode;
  /** A backreference is caseless (needs the `i` flag). */
  caselessBackref: boolean;
  /** A letter is matched with regard to case somewhere. */
  caseSensitiveLetter: boolean;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
/** The set of each byte (0-255), and of each byte caseless (256-511). */
const CHAR_SETS: ByteSet[] = [];
/** `.` under `(?s)`, and without it (no newline), shared. */
const ANY = negated(emptySet());
const ANY_BUT_NEWLINE = negated(emptySet());
ANY_BUT_NEWLINE.bits[0x0a] = 0;
/** What PCRE2 reads as a quantifier. */
const QUANTIFIER = /^(?:[*+?]|\{\d+(?:,\d*)?\})/;
/** An item that is no item at all (`(?#…)`, `\E`, an empty `\Q\E`). */
const TRANSPARENT: PcreNode = { kind: "seq", items: [] };

/**
 * Parses a PCRE2 pattern as nginx compiles it.
 *
 * @param source The pattern.
 * @param caseless PCRE2_CASELESS (`~*`, `server_name`, nginx for Windows).
 * @returns The tree.
 * @throws {PcreError} Refused by PCRE2 or by the gateway.
 */
export function parsePcre(source: string, caseless: boolean): ParsedPcre {
  return new Parser(source, caseless).parse();
}

class Parser {
  readonly #c: Cursor;
  #opts: Options;
  readonly #groups = new GroupChecks();
  /** Group names, by name. */
  readonly #names = new Map<string, number>();
  /** References to check once all groups are known: [group, offset]. */
  readonly #refs: [number | string, number][] = [];
  #caselessBackref = false;
  #caseSensitiveLetter = false;
  /** The group being read. */
  #current: Frame;
  /** Groups open, the whole pattern counted. */
  #depth = 0;
  /** `(?J)` was read: PCRE2 takes a name used twice. */
  #dupnames = false;

  constructor(source: string, caseless: boolean) {
    this.#c = { s: source, at: 0, later: null };
    this.#opts = {
      i: caseless,
      s: false,
      x: false,
      xx: false,
      n: false,
      U: false,
    };
    this.#current = this.#groups.root();
  }

  parse(): ParsedPcre {
    if (startsWithOption(this.#c.s)) {
      unsupported("a leading (*VERB) option setting", 0);
    }
    const root = this.#alternation(this.#current);
    if (this.#c.at < this.#c.s.length) {
      fail("unmatched closing parenthesis", this.#c.at);
    }
    // PCRE2 checks lookbehinds, then references and size as it compiles.
    if (this.#groups.lookbehindError !== null) {
      throw this.#groups.lookbehindError;
    }
    for (const [ref, at] of this.#refs) {
      const n = typeof ref === "number" ? ref : this.#names.get(ref);
      if (n === undefined || n > this.#groups.count) {
        fail("reference to non-existent subpattern", at);
      }
    }
    if (compiledLength(root) > MAX_PATTERN_SIZE) {
      fail("regular expression is too large", null);
    }
    const later = this.#c.later ?? this.#groups.deferred;
    if (later !== null) throw later;
    return {
      root,
      caselessBackref: this.#caselessBackref,
      caseSensitiveLetter: this.#caseSensitiveLetter,
    };
  }

  /** Branches up to `)` or the end; options set inside end with the group. */
  #alternation(frame: Frame): PcreNode {
    // PCRE2's PARENS_NEST_LIMIT; it also bounds this reader's recursion.
    if (++this.#depth > 251) {
      fail("parentheses are too deeply nested", this.#c.at);
    }
    const saved = { ...this.#opts };
    const outer = this.#current;
    this.#current = frame;
    const branches: PcreNode[] = [this.#sequence(frame)];
    while (this.#c.s[this.#c.at] === "|") {
      this.#c.at++;
      this.#groups.branch(frame);
      branches.push(this.#sequence(frame));
    }
    this.#opts = saved;
    this.#current = outer;
    this.#depth--;
    return branches.length === 1 ? branches[0]! : { kind: "alt", branches };
  }

  #sequence(frame: Frame): PcreNode {
    const items: PcreNode[] = [];
    /** The last item while no quantifier follows it, and where it began. */
    let bare: [PcreNode, number] | null = null;
    for (;;) {
      this.#skipExtended();
      const c = this.#c.s[this.#c.at];
      if (c === undefined || c === "|" || c === ")") break;
      const start = this.#c.at;
      const atom = this.#atom(frame, items);
      if (atom === TRANSPARENT) {
        // `a(?#…)+`, `a\E+`: the quantifier is the item's before them.
        this.#skipExtended();
        if (bare !== null && QUANTIFIER.test(this.#c.s.slice(this.#c.at))) {
          items[items.length - 1] = this.#quantified(bare[0], bare[1]);
          bare = null;
        }
        continue;
      }
      bare = null;
      if (atom === null) continue;
      this.#skipExtended();
      const item = this.#quantified(atom, start);
      items.push(item);
      if (item === atom) bare = [atom, start];
    }
    return items.length === 1 ? items[0]! : { kind: "seq", items };
  }

  /**
   * What PCRE2 reads past before a quantifier's `?` or `+` (parse_regex()):
   * `\E`, an empty `\Q\E`, `(?#…)`, under `(?x)` spaces and comments
   * (`a?\E?` is `a??`).
   */
  #skipQuiet(): void {
    const s = this.#c.s;
    for (;;) {
      this.#skipExtended();
      const at = this.#c.at;
      if (s.startsWith("\\E", at)) this.#c.at += 2;
      else if (s.startsWith("\\Q\\E", at)) this.#c.at += 4;
      else if (s.startsWith("(?#", at) && s.includes(")", at)) {
        this.#c.at = s.indexOf(")", at) + 1;
      } else return;
    }
  }

  /** Spaces and `#` comments under `(?x)`. */
  #skipExtended(): void {
    if (!this.#opts.x) return;
    for (;;) {
      const c = this.#c.s[this.#c.at];
      if (
        c === " " || c === "\t" || c === "\n" || c === "\v" || c === "\f" ||
        c === "\r"
      ) {
        this.#c.at++;
      } else if (c === "#") {
        const nl = this.#c.s.indexOf("\n", this.#c.at);
        this.#c.at = nl < 0 ? this.#c.s.length : nl + 1;
      } else return;
    }
  }

  /** A char written in the pattern: above 0x7F it is text (UTF-8 in nginx). */
  #literal(code: number): PcreNode {
    return code > 0x7f ? { kind: "text", code } : this.#char(code);
  }

  /** A byte as a node: a set of it (both cases when caseless). */
  #char(code: number): PcreNode {
    // One set per byte and case rule, shared: a long pattern of plain
    // chars made one 256-entry set each (no set is changed once made).
    const key = this.#opts.i ? code + 256 : code;
    let set = CHAR_SETS[key];
    if (set === undefined) {
      set = emptySet();
      set.bits[code] = 1;
      CHAR_SETS[key] = set = this.#opts.i ? folded(set) : set;
    }
    if (!this.#opts.i && /[A-Za-z]/.test(String.fromCharCode(code))) {
      this.#caseSensitiveLetter = true;
    }
    return { kind: "set", set };
  }

  #fold(set: ByteSet): ByteSet {
    const both = folded(set);
    if (this.#opts.i) return both;
    if (both.bits.some((x, b) => x !== set.bits[b])) {
      this.#caseSensitiveLetter = true;
    }
    return set;
  }

  /** One item, or `null` for what matches nothing (`(?i)`, `\E`, a comment). */
  #atom(frame: Frame, items: PcreNode[]): PcreNode | null {
    const s = this.#c.s;
    const c = s[this.#c.at]!;
    const start = this.#c.at;
    this.#c.at++;
    switch (c) {
      case "(":
        return this.#group(frame, start);
      case "[": {
        // `[[:<:]]`, `[[:>:]]`: PCRE2 reads them as `\b(?=\w)`, `\b(?<=\w)`.
        const word = /^\[:([<>]):\]\]/.exec(s.slice(this.#c.at));
        if (word !== null) {
          this.#c.at += 6;
          const w = typeEscape("w")!;
          return {
            kind: "seq",
            items: [{ kind: "anchor", which: "b" }, {
              kind: "look",
              ahead: word[1] === "<",
              negative: false,
              body: { kind: "set", set: w, code: 1 },
            }],
          };
        }
        if (posixEnd(this.#c.s, start) >= 0) {
          fail(
            this.#c.s[start + 1] === ":"
              ? "POSIX named classes are supported only within a class"
              : "POSIX collating elements are not supported",
            start,
          );
        }
        const { set, negate, literals } = readClass(this.#c, this.#opts.xx);
        // PCRE2 adds the other case before it negates: `[^a]` takes no `A`.
        return {
          kind: "set",
          set: negate ? negated(this.#fold(set)) : this.#fold(set),
          code: classLength(negate, literals),
        };
      }
      case ".":
        return {
          kind: "set",
          set: this.#opts.s ? ANY : ANY_BUT_NEWLINE,
          code: 1,
        };
      case "^":
        return { kind: "anchor", which: "start" };
      case "$":
        return { kind: "anchor", which: "dollar" };
      case "*":
      case "+":
      case "?":
        return fail("quantifier does not follow a repeatable item", start);
      case "\\":
        return this.#escapeOutside(frame, items);
    }
    const braces = c === "{" ? this.#braces(start) : null;
    if (braces !== null) {
      fail("quantifier does not follow a repeatable item", braces[2] - 1);
    }
    const code = c.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdbff) {
      unsupported("a char beyond U+FFFF", start);
    }
    return this.#literal(code);
  }

  /** `{n}`, `{n,}`, `{n,m}` at `at`: [min, max, end], or `null` (a literal `{`). */
  #braces(at: number): [number, number, number] | null {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.#c.s.slice(at));
    if (m === null) return null;
    const min = Number(m[1]);
    const max = m[2] === undefined
      ? min
      : m[3] === ""
      ? Infinity
      : Number(m[3]);
    const end = at + m[0].length;
    if (min > 65535 || (max !== Infinity && max > 65535)) {
      fail("number too big in {} quantifier", end - 1);
    }
    if (max < min) fail("numbers out of order in {} quantifier", end - 1);
    return [min, max, end];
  }

  #quantified(atom: PcreNode, start: number): PcreNode {
    const s = this.#c.s;
    const c = s[this.#c.at];
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const braces = this.#braces(this.#c.at);
      if (braces === null) return atom;
      [min, max] = braces;
      this.#c.at = braces[2] - 1;
    } else return atom;
    const at = this.#c.at;
    this.#c.at++;
    if (atom.kind === "anchor") {
      fail("quantifier does not follow a repeatable item", at);
    }
    // A seq is `[[:<:]]`: PCRE2 repeats its lookaround.
    if (atom.kind === "look" || atom.kind === "seq") {
      defer(this.#c, "a repeated assertion", at);
    }
    if (atom.kind === "text") {
      defer(
        this.#c,
        "a repeated non-ASCII char (nginx repeats its last byte)",
        at,
      );
    }
    let lazy = this.#opts.U;
    let possessive = false;
    this.#skipQuiet();
    if (s[this.#c.at] === "?") [lazy, this.#c.at] = [!lazy, this.#c.at + 1];
    else if (s[this.#c.at] === "+") {
      [possessive, this.#c.at] = [true, this.#c.at + 1];
    }
    this.#groups.repeated(atom, min, max, start);
    if (minWidth(atom) === 0 && prefersEmpty(atom)) {
      // PCRE2 takes a turn that matches nothing; JavaScript refuses an
      // empty turn of a quantifier and tries the atom's next way, so what
      // `(|b)?` or `(b??)?` take (and their captures) would differ.
      defer(
        this.#c,
        "a repeated item that can match the empty string first (an empty branch before another, or a lazy repeat)",
        start,
      );
    }
    const repeat: PcreNode = {
      kind: "repeat",
      body: atom,
      min,
      max,
      lazy: possessive ? false : lazy,
    };
    return possessive ? this.#atomic(repeat, at, false) : repeat;
  }

  /**
   * An atomic group or possessive repeat, where JavaScript has an exact
   * equivalent: an unbounded repeat of one set (`X*+`, `(?>X+)`) takes every
   * X it can and gives none back, as `X*(?!X)` does.
   */
  #atomic(node: PcreNode, at: number, group: boolean): PcreNode {
    if (
      node.kind === "repeat" && node.max === Infinity && !node.lazy &&
      node.body.kind === "set"
    ) {
      // PCRE2's code: the repeat's possessive opcode, or a ONCE group.
      const code = nodeLength(node) + (group ? BRACKETS : 0);
      return {
        kind: "seq",
        code,
        items: [node, {
          kind: "look",
          ahead: true,
          negative: true,
          body: node.body,
        }],
      };
    }
    defer(
      this.#c,
      "an atomic group or possessive quantifier other than on one char or class repeated without bound",
      at,
    );
    return node;
  }

  #group(frame: Frame, start: number): PcreNode | null {
    const s = this.#c.s;
    if (s[this.#c.at] === "*") return this.#verb(frame, start);
    if (s[this.#c.at] !== "?") {
      return this.#body(frame, start, this.#opts.n ? null : "", "group");
    }
    this.#c.at++;
    const c = s[this.#c.at];
    if (c === "#") {
      const close = s.indexOf(")", this.#c.at);
      if (close < 0) fail("missing ) after (?# comment", null);
      this.#c.at = close + 1;
      return TRANSPARENT;
    }
    if (c === ":") return this.#c.at++, this.#body(frame, start, null, "group");
    if (c === "=" || c === "!") {
      return this.#c.at++, this.#body(frame, start, null, c);
    }
    if (c === "*" || (c === "<" && s[this.#c.at + 1] === "*")) {
      defer(this.#c, "a non-atomic assertion (?*…) or (?<*…)", start);
      this.#c.at += c === "*" ? 1 : 2;
      return this.#body(frame, start, null, c === "*" ? "=" : "<=");
    }
    if (c === "<" && (s[this.#c.at + 1] === "=" || s[this.#c.at + 1] === "!")) {
      this.#c.at += 2;
      return this.#body(
        frame,
        start,
        null,
        s[this.#c.at - 1] === "=" ? "<=" : "<!",
      );
    }
    if (c === ">") {
      this.#c.at++;
      const inner = this.#body(frame, start, null, "group");
      return this.#atomic(
        inner.kind === "group" ? inner.body : inner,
        start,
        true,
      );
    }
    if (c === "|") {
      this.#c.at++;
      const before = this.#groups.count;
      const node = this.#body(frame, start, null, "group");
      if (this.#groups.count !== before) {
        defer(this.#c, "a branch reset group (?|…) with captures", start);
      }
      return node;
    }
    if (c === "P" && s[this.#c.at + 1] === "=") {
      this.#c.at += 2;
      const name = this.#name(")");
      return this.#backref(name, start + 4);
    }
    if (c === "P" && s[this.#c.at + 1] === undefined) {
      return fail("missing closing parenthesis", null);
    }
    if (c === "P" && !"<=>".includes(s[this.#c.at + 1]!)) {
      return fail("unrecognized character after (?P", this.#c.at + 1);
    }
    if (c === "P" && s[this.#c.at + 1] === "<") {
      this.#c.at += 2;
      return this.#body(frame, start, this.#name(">"), "group");
    }
    if (c === "<" || c === "'") {
      this.#c.at++;
      return this.#body(
        frame,
        start,
        this.#name(c === "<" ? ">" : "'"),
        "group",
      );
    }
    if (c === undefined) return fail("missing closing parenthesis", null);
    if (c === "+" && !/[0-9]/.test(s[this.#c.at + 1] ?? "")) {
      fail("digit expected after (?+ or (?-", this.#c.at);
    }
    if (c === "-" && /[0-9]/.test(s[this.#c.at + 1] ?? "")) {
      unsupported(`"(?-" (recursion)`, this.#c.at);
    }
    if (/[imnsxUJ^-]/.test(c) || c === ")") return this.#options(frame, start);
    if (/[0-9+R&C(P]/.test(c)) {
      unsupported(`"(?${c}" (recursion, conditionals, callouts)`, this.#c.at);
    }
    return fail("unrecognized character after (? or (?-", this.#c.at);
  }

  /**
   * `(*VERB)`, `(*VERB:NAME)` or an alpha assertion `(*pla:…)`: the
   * assertions PCRE2 spells both ways are read as their `(?…)` forms, the
   * rest refused once the whole pattern is read (they steer backtracking
   * JavaScript does not do).
   */
  #verb(frame: Frame, start: number): PcreNode | null {
    const verb = readVerb(this.#c, start);
    if (verb.kind === "verb") {
      defer(this.#c, "a (*VERB)", start);
      // Only (*ACCEPT) may be repeated: an empty group stands for it.
      return verb.name === "ACCEPT"
        ? { kind: "group", capture: null, name: null, body: TRANSPARENT }
        : null;
    }
    const form = verb.form;
    if (form === ">") {
      const inner = this.#body(frame, start, null, "group");
      return this.#atomic(
        inner.kind === "group" ? inner.body : inner,
        start,
        true,
      );
    }
    if (form === "group") defer(this.#c, "a script run (*sr:…)", start);
    else if (form === "*=" || form === "*<=") {
      defer(this.#c, "a non-atomic assertion (*napla:…)", start);
    }
    return this.#body(
      frame,
      start,
      null,
      form === "*=" ? "=" : form === "*<=" ? "<=" : form,
    );
  }

  /** `(?imnsxU-imnsxU)` or `(?…:body)`. */
  #options(frame: Frame, start: number): PcreNode | null {
    const s = this.#c.s;
    const opts = { ...this.#opts };
    let on = true;
    /** One `-` at most, and none after `^` (PCRE2's ERR94). */
    let hyphen = true;
    if (s[this.#c.at] === "^") {
      hyphen = false;
      Object.assign(opts, {
        i: false,
        s: false,
        x: false,
        xx: false,
        n: false,
      });
      this.#c.at++;
    }
    for (;;) {
      const c = s[this.#c.at];
      if (c === undefined) fail("missing closing parenthesis", null);
      if (c === ")" || c === ":") break;
      if (c === "-") {
        if (!hyphen) fail("invalid hyphen in option setting", this.#c.at);
        [on, hyphen] = [false, false];
      } else if (c === "x" && s[this.#c.at + 1] === "x") {
        opts.x = opts.xx = on;
        this.#c.at++;
      } else if (
        c === "i" || c === "s" || c === "x" || c === "n" || c === "U"
      ) {
        opts[c] = on;
        if (c === "x" && !on) opts.xx = false;
      } else if (c === "J") {
        // Harmless until a name is used twice.
        if (on) this.#dupnames = true;
      } else if (c === "m") {
        if (on) defer(this.#c, "(?m): multiline ^ and $", this.#c.at);
      } else fail("unrecognized character after (? or (?-", this.#c.at);
      this.#c.at++;
    }
    if (s[this.#c.at] === ")") {
      this.#c.at++;
      this.#opts = opts;
      return null;
    }
    this.#c.at++;
    const saved = this.#opts;
    this.#opts = opts;
    const node = this.#body(frame, start, null, "group");
    this.#opts = saved;
    return node;
  }

  /** A group name up to `end`. */
  #name(end: string): string {
    const s = this.#c.s;
    const at = this.#c.at;
    if (/\d/.test(s[at] ?? "")) {
      fail("subpattern name must start with a non-digit", at);
    }
    const m = NAME.exec(s.slice(at));
    if (m === null) {
      return fail("subpattern name expected", s[at] === undefined ? null : at);
    }
    this.#c.at += m[0].length;
    if (m[0].length > 32) {
      fail("subpattern name is too long (maximum 32 code units)", this.#c.at);
    }
    if (s[this.#c.at] !== end) {
      fail(
        "syntax error in subpattern name (missing terminator?)",
        s[this.#c.at] === undefined ? null : this.#c.at,
      );
    }
    this.#c.at++;
    return m[0];
  }

  /**
   * A group's body to its `)`: `name` `""` for a numbered capture, a name
   * for a named one, `null` for none.
   */
  #body(
    frame: Frame,
    start: number,
    name: string | null,
    kind: "group" | "=" | "!" | "<=" | "<!",
  ): PcreNode {
    let capture: number | null = null;
    if (name !== null) {
      capture = this.#groups.count + 1;
      if (name !== "") {
        if (!this.#names.has(name)) this.#names.set(name, capture);
        else if (this.#dupnames) {
          defer(this.#c, "a group name used twice", this.#c.at);
        } else {
          fail(
            "two named subpatterns have the same name (PCRE2_DUPNAMES not set)",
            this.#c.at,
          );
        }
      }
    }
    const inner = this.#groups.open(
      frame,
      capture,
      kind === "!" || kind === "<!",
    );
    const body = this.#alternation(inner);
    if (this.#c.s[this.#c.at] !== ")") {
      fail("missing closing parenthesis", null);
    }
    this.#c.at++;
    const ahead = kind === "=" || kind === "!";
    if (kind !== "group" && !ahead) this.#groups.lookbehind(body, start);
    const node: PcreNode = kind === "group"
      ? { kind: "group", capture, name: name === "" ? null : name, body }
      : { kind: "look", ahead, negative: kind === "!" || kind === "<!", body };
    this.#groups.close(inner, node);
    return node;
  }

  #backref(ref: number | string, at: number): PcreNode {
    this.#refs.push([ref, at]);
    const group = typeof ref === "number" ? ref : this.#names.get(ref);
    if (this.#opts.i) this.#caselessBackref = true;
    // A name or number not (yet) known is checked once all are.
    this.#groups.backref(group ?? 0, this.#current, at);
    return { kind: "backref", group: group ?? 0 };
  }

  /** After `\` outside a class. */
  #escapeOutside(frame: Frame, items: PcreNode[]): PcreNode | null {
    const s = this.#c.s;
    const at = this.#c.at;
    const c = s[at];
    if (c === undefined) return fail("\\ at end of pattern", null);
    this.#c.at++;
    switch (c) {
      case "A":
      case "G":
        return { kind: "anchor", which: "start" };
      case "z":
        return { kind: "anchor", which: "end" };
      case "Z":
        return { kind: "anchor", which: "dollar" };
      case "b":
        return { kind: "anchor", which: "b" };
      case "B":
        return { kind: "anchor", which: "B" };
      case "E":
        return TRANSPARENT;
      case "Q": {
        const end = s.indexOf("\\E", this.#c.at);
        const text = s.slice(this.#c.at, end < 0 ? s.length : end);
        this.#c.at = end < 0 ? s.length : end + 2;
        if (text === "") return TRANSPARENT;
        // The last char is the one a quantifier after `\E` repeats.
        for (const ch of text.slice(0, -1)) {
          items.push(this.#literal(ch.charCodeAt(0)));
        }
        return this.#literal(text.charCodeAt(text.length - 1));
      }
      case "R":
        return {
          kind: "raw",
          source: "\\r\\n|\\r(?!\\n)|[\\n\\x0b\\x0c\\x85]",
          min: 1,
        };
      case "g":
      case "k":
        return this.#namedRef(c, at);
    }
    if (c >= "1" && c <= "9") {
      const digits = /^\d+/.exec(s.slice(at))![0];
      const n = Number(digits);
      if (n < 10 || c === "8" || c === "9" || n <= this.#groups.count) {
        this.#c.at = at + digits.length;
        if (n > MAX_GROUP) {
          fail(
            "subpattern number is too big",
            this.#c.at >= s.length ? null : this.#c.at,
          );
        }
        // PCRE2 names a reference by its last char.
        return this.#backref(n, this.#c.at - 1);
      }
    }
    const code = escapeChar(this.#c, c);
    if (code !== null) {
      return code > 0x7f && !/[A-Za-z0-9]/.test(c)
        ? this.#literal(code)
        : this.#char(code);
    }
    const set = typeEscape(c);
    if (set !== null) return { kind: "set", set, code: 1 };
    void frame;
    if (c === "X" || c === "C" || c === "K") {
      // Refused once the pattern is read; what stands for them is never
      // run: a char for `\X` and `\C`, no char for `\K`, which PCRE2
      // does not let a quantifier follow.
      defer(this.#c, `"\\${c}"`, at - 1);
      return c === "K"
        ? { kind: "anchor", which: "b" }
        : { kind: "set", set: ANY, code: 1 };
    }
    return otherEscape(c, at);
  }

  /** `\g{n}`, `\g{-n}`, `\gn`, `\g{name}`, `\k<name>`, `\k'name'`, `\k{name}`. */
  #namedRef(c: string, at: number): PcreNode {
    const s = this.#c.s;
    const open = s[this.#c.at];
    if (c === "g") {
      const n = groupNumber(this.#c, this.#groups.count);
      if (n !== null) return this.#backref(n, this.#c.at - 1);
      const call = /^(?:<([+-]?\d+|[A-Za-z_]\w*)>|'([+-]?\d+|[A-Za-z_]\w*)')/
        .exec(s.slice(this.#c.at));
      if (call !== null) unsupported("a subroutine call \\g<…>", at);
      if (open !== "{") {
        fail(
          "\\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number",
          open === undefined ? null : this.#c.at,
        );
      }
    }
    const end = open === "<"
      ? ">"
      : open === "'"
      ? "'"
      : open === "{"
      ? "}"
      : null;
    if (end === null) {
      return fail(
        "\\k is not followed by a braced, angle-bracketed, or quoted name",
        open === undefined ? null : this.#c.at,
      );
    }
    this.#c.at++;
    const nameAt = this.#c.at;
    return this.#backref(this.#name(end), nameAt);
  }
}

/**
 * Whether a node's first way through may match nothing where a later way
 * matches something: a branch that can be empty before another branch, or
 * a lazy repeat that may take no turn. A greedy repeat tries its turns
 * first, so it prefers to match something.
 */
function prefersEmpty(node: PcreNode): boolean {
  switch (node.kind) {
    case "seq":
      return node.items.some(prefersEmpty);
    case "alt":
      return node.branches.some((branch, i) =>
        (i < node.branches.length - 1 && minWidth(branch) === 0) ||
        prefersEmpty(branch)
      );
    case "group":
    case "look":
      return prefersEmpty(node.body);
    case "repeat":
      return (node.lazy && node.min === 0) || prefersEmpty(node.body);
    default:
      return false;
  }
}
