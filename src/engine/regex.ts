/**
 * nginx's regular expressions (PCRE2 as nginx 1.22 compiles them: no UTF,
 * caseless for `~*`) as JavaScript's. Each pattern is read as PCRE2 reads
 * it (pcre_parse.ts) and written again as a JavaScript expression that
 * matches and captures what PCRE2 does, or refused when loaded: with
 * nginx's `pcre2_compile() failed: …` line where PCRE2 refuses it, with the
 * reason where PCRE2 takes it but JavaScript cannot run it the same way (an
 * atomic group, a backreference to a group that may not have taken part).
 * A pattern is never run as something else: `[[:alnum:]]`, `\z`, `\h`,
 * `\Q…\E`, `(?i)` mean what they mean in nginx, and `.`, `\s`, `$` too
 * (`.` takes `\r`; `\s` no U+00A0; `$` matches before a final newline).
 *
 * Taken as PCRE2 takes them: POSIX classes (`[[:alnum:]]`), the word
 * start and end `[[:<:]]`, `[[:>:]]`, `\A`, `\z`,
 * `\Z`, `\h`, `\v`, `\R`, `\Q…\E`, `\x{41}`, options `(?i)`, `(?s)`, `(?x)`,
 * `(?U)`, `(?n)` (scoped too: `(?i:…)`, `(?-i)` mid-pattern), `(?#…)`,
 * `(?P=name)`, `\g{-1}`, the alpha assertions (`(*pla:…)`, `(*nlb:…)`,
 * `(*atomic:…)`). Refused with the reason (README regex-syntax), most
 * once the whole pattern is read as PCRE2 reads it (PCRE2's own refusal
 * of a later part is nginx's, so it comes first):
 * `\p`, `\X`, `\C`, `\K`, recursion, conditionals, callouts, `(*VERB)`s,
 * non-atomic assertions (`(?*…)`), script runs,
 * `(?m)`, a name used twice under `(?J)`; an atomic group or possessive
 * repeat other than one char or class repeated without bound (`[^/]*+`,
 * `(?>a+)` are taken); a branch-reset group with captures; a backreference
 * to a group that may not have taken part, in a lookbehind, or caseless in
 * a pattern partly with regard to case; a repeated group holding a capture
 * that may sit out a turn (`(?:(a)|b)+`) or able to match nothing
 * (`(a?)+`); a repeated item that can match nothing first (`(|b)?`,
 * `(b??)?`: PCRE2 takes the empty turn, JavaScript the next way); a
 * non-ASCII char in a class or repeated (`[é]`, `é+`); a pattern over 4096
 * chars; one V8's linear engine cannot take that could backtrack without
 * bound ({@linkcode compileRegex}).
 *
 * On a subject with chars above U+007F (README regex-bytes) `\W`, `\S`,
 * `\D`, `\H` also take the whole char, `\xA0`…`\xFF` and `\h` match the char
 * of that code where nginx matches the byte, a caseless backreference
 * folds a non-ASCII letter, and a non-ASCII char written in the pattern
 * (`map $http_x ~é`) does not match a field's UTF-8 bytes (fields are a
 * byte per char), where nginx's does.
 *
 * The subject is the gateway's text (the decoded URI, fields as one char
 * per byte): on ASCII the two are the same bytes. Where a subject holds a
 * char above U+007F, nginx matches its UTF-8 bytes and the gateway the
 * char (README: **regex-bytes**).
 *
 * A client chooses the text these expressions run on (URI, `Host`, any
 * header a `map` reads), so an expression that backtracks without bound
 * (`^(a+)+$`, `^/(.*)/(.*)/(.*)$` on a long URI) would stall the one event
 * loop for every client. nginx bounds PCRE with its match limit and answers
 * 500 (`pcre2_match() failed: -47`); V8 has no such limit, but the gateway
 * runs with `--enable-experimental-regexp-engine-on-excessive-backtracks`
 * (scripts/compile.ts), which finishes such a match in linear time. That
 * engine takes no `i` flag, so a caseless expression is written with both
 * cases of each ASCII letter spelled out, as PCRE2 without UTF folds only
 * ASCII. Backreferences and lookaheads keep the backtracking engine alone
 * (the linear one cannot run them).
 *
 * @module
 */

import { ValueError } from "./complex_value.ts";
import {
  type ParsedPcre,
  parsePcre,
  PcreError,
  type PcreNode,
} from "./pcre_parse.ts";
import { jsChar, jsSet } from "./pcre_sets.ts";

/**
 * A final `$` of the newline variant: its `(\n?)` group, and the captures
 * that enclose it (they end where it does).
 */
interface FinalDollar {
  index: number;
  enclosing: number[];
  names: string[];
}

/**
 * An expression with a `$` (or `\Z`): PCRE2's matches at the end and before
 * a newline that ends the subject; JavaScript's only at the end. A subject
 * that ends in a newline (a URI with `%0A`) gets a variant of its own:
 * where every such `$` ends the pattern, it is `(\n?)$`, which V8's linear
 * engine still runs, and the newline taken is given back from the match
 * and the captures around it; otherwise it is `(?=\n?$)`, on the
 * backtracking engine. Every other subject runs the expression as written
 * with JavaScript's `$`. Each is a RegExp of its own: `super.exec` on this
 * subclass left V8's fast path (about 10 ns a call), a plain RegExp's
 * `exec` does not.
 */
class DollarRegExp extends RegExp {
  readonly #plain: RegExp;
  readonly #atNewline: RegExp;
  /** The variant's final `$`s, or `null` for the lookahead variant. */
  readonly #finals: FinalDollar[] | null;
  readonly #captures: number;

  /** `split`, `matchAll` and the like make plain copies. */
  static override get [Symbol.species](): RegExpConstructor {
    return RegExp;
  }

  constructor(
    source: string,
    flags: string,
    atNewline: string,
    finals: FinalDollar[] | null,
    captures: number,
  ) {
    super(source, flags);
    this.#plain = new RegExp(source, flags);
    this.#atNewline = new RegExp(atNewline, flags);
    this.#finals = finals;
    this.#captures = captures;
  }

  /** The newline variant runs on V8's linear engine too. */
  get linearAtNewline(): boolean {
    return this.#finals !== null;
  }

  /** PCRE2's match of `subject`. */
  override exec(subject: string): RegExpExecArray | null {
    if (subject.charCodeAt(subject.length - 1) !== 0x0a) {
      return this.#plain.exec(subject);
    }
    const m = this.#atNewline.exec(subject);
    if (m === null || this.#finals === null) return m;
    for (const final of this.#finals) {
      if (m[final.index] !== "\n") continue;
      // PCRE2's `$` matched before the newline: the match ends there.
      m[0] = m[0].slice(0, -1);
      for (const g of final.enclosing) m[g] = m[g]!.slice(0, -1);
      for (const name of final.names) {
        m.groups![name] = m.groups![name]!.slice(0, -1);
      }
      break;
    }
    m.length = this.#captures + 1;
    return m;
  }
}

/** The longest pattern taken: nginx.conf's parameters end at 4096 bytes. */
const MAX_SOURCE = 4096;

/**
 * Compiles a location, `rewrite`, `if`, `map` or other regex of nginx.conf.
 *
 * @param source The expression as written.
 * @param caseless PCRE2_CASELESS: `~*`, a `server_name` with an upper-case letter, every location
 * regex of nginx for Windows.
 * @returns The expression.
 * @throws {ValueError} With nginx's `pcre2_compile() failed` message, or
 * the gateway's `regex "…" is not supported: …` one.
 *
 * @example Usage
 * ```ts
 * import { compileRegex } from "./regex.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(compileRegex("^/api/(?P<rest>.*)$", false).exec("/api/x")?.groups?.rest, "x");
 * strictEqual(compileRegex("\\.JS$", true).test("/app.js"), true);
 * strictEqual(compileRegex("^/a/[[:alnum:]]+\\z", false).test("/a/b1"), true);
 * ```
 */
export function compileRegex(source: string, caseless: boolean): RegExp {
  if (source.length > MAX_SOURCE) {
    // nginx reads no parameter this long (`too long parameter`, its 4096-byte
    // NGX_CONF_BUFFER); the bound keeps a hostile file's load short.
    throw new ValueError(
      `regex "${
        source.slice(0, 64)
      }…" is not supported: longer than ${MAX_SOURCE} chars, the longest parameter nginx reads`,
    );
  }
  let parsed: ParsedPcre;
  try {
    parsed = parsePcre(source, caseless);
  } catch (error) {
    if (!(error instanceof PcreError)) throw error;
    const at = error.at === null || error.at >= source.length
      ? ""
      : ` at "${source.slice(error.at)}"`;
    throw new ValueError(
      error.unsupported
        ? `regex "${source}" is not supported: ${error.message}${at}`
        : `pcre2_compile() failed: ${error.message} in "${source}"${at}`,
    );
  }
  if (parsed.caselessBackref && parsed.caseSensitiveLetter) {
    throw new ValueError(
      `regex "${source}" is not supported: a caseless backreference in an expression partly with regard to case`,
    );
  }
  const unbounded = unboundedBacktracking(parsed.root);
  if (unbounded !== null) {
    throw new ValueError(
      `regex "${source}" is not supported: ${unbounded}`,
    );
  }
  // A caseless backreference needs the flag (the letters are spelled out).
  const flags = parsed.caselessBackref ? "i" : "";
  try {
    return written(parsed, flags);
  } catch (error) {
    // V8's own bounds (an expression too large to compile).
    if (!(error instanceof SyntaxError)) throw error;
    throw new ValueError(
      `regex "${source}" is not supported: ${error.message}`,
    );
  }
}

/**
 * V8's linear engine, which finishes a match the backtracking one would not
 * (the run flag `--enable-experimental-regexp-engine-on-excessive-backtracks`),
 * takes no counted repeat over 16, nor nested ones whose bounds multiply past
 * 16 (`kMaxReplicationFactor`, V8's experimental-compiler.cc; a `{n,}` counts
 * n + 1). Such a pattern runs on the backtracking engine alone, with no
 * bound: one request could hold the event loop for ever (`^/h/([a-z]{1,63}\.?)+$`
 * on 34 letters and a `!`: over 10 s against 4 ms at `{1,16}`). Refused when
 * it can backtrack without bound, a repeat holding a repeat or an
 * alternation, or two unbounded repeats; a single counted repeat backtracks
 * within its bound. Backreferences and lookarounds, which that engine takes
 * in no form, are named in the README (regex-backtracking).
 *
 * @returns Why the pattern is refused, or `null`.
 */
function unboundedBacktracking(root: PcreNode): string | null {
  let linear = true;
  let nested = false;
  let open = 0;
  const walk = (node: PcreNode, factor: number, inRepeat: boolean): void => {
    switch (node.kind) {
      case "seq":
        for (const item of node.items) walk(item, factor, inRepeat);
        return;
      case "alt":
        if (inRepeat) nested = true;
        for (const branch of node.branches) walk(branch, factor, inRepeat);
        return;
      case "group":
      case "look":
        walk(node.body, factor, inRepeat);
        return;
      case "repeat": {
        const { min, max } = node;
        if (min > 16 || (max !== Infinity && max > 16)) linear = false;
        const local = max === Infinity ? min + 1 : max;
        if (factor * local > 16) linear = false;
        const repeats = max > 1;
        if (repeats && inRepeat) nested = true;
        if (max === Infinity) open++;
        walk(node.body, factor * Math.min(local, 17), inRepeat || repeats);
        return;
      }
      default:
        return;
    }
  };
  walk(root, 1, false);
  if (linear) return null;
  if (nested) {
    return "a repeat over 16 times (or nested repeats over 16 together) around another repeat or an alternation can backtrack without bound (write + or * for the counted repeat)";
  }
  if (open > 1) {
    return "a repeat over 16 times beside two unbounded repeats can backtrack without bound (write + or * for the counted repeat)";
  }
  return null;
}

/** The JavaScript expression (or pair) for a parsed pattern. */
function written(parsed: ParsedPcre, flags: string): RegExp {
  const plain = emit(parsed.root, new Emit("plain"));
  const lookahead = emit(parsed.root, new Emit("lookahead"));
  if (plain === lookahead) return new RegExp(plain, flags);
  const consume = new Emit("consume");
  let taken: string | null;
  try {
    taken = emit(parsed.root, consume);
  } catch (error) {
    if (error !== FALLBACK) throw error;
    taken = null;
  }
  return taken === null
    ? new DollarRegExp(plain, flags, lookahead, null, 0)
    : new DollarRegExp(plain, flags, taken, consume.finals, consume.captures);
}

/**
 * Whether V8's linear engine can take over a match of a compiled
 * expression that backtracks too long: not with a lookahead (also written
 * for `a++`, `\R`, a `$` before more pattern) or a backreference.
 *
 * @param regex An expression from {@linkcode compileRegex}.
 * @returns Whether every subject's match is bounded.
 *
 * @example Usage
 * ```ts
 * import { compileRegex, runsLinear } from "./regex.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(runsLinear(compileRegex("^(a+)+$", false)), true);
 * strictEqual(runsLinear(compileRegex("^/a++b", false)), false);
 * ```
 */
export function runsLinear(regex: RegExp): boolean {
  if (regex instanceof DollarRegExp && !regex.linearAtNewline) return false;
  // Written chars are `\xHH`: `(?=` and `\1` are only what they mean.
  return !/\(\?[=!]|\\[1-9]/.test(regex.source);
}

/** The consuming variant cannot be written: the lookahead one is used. */
const FALLBACK = new Error("fallback");

/** How `$` is written, and the groups counted on the way. */
class Emit {
  readonly mode: "plain" | "lookahead" | "consume";
  /** JavaScript's groups so far. */
  groups = 0;
  /** PCRE2's captures. */
  captures = 0;
  /** The captures around the node being written: [number, name]. */
  readonly open: [number, string | null][] = [];
  readonly finals: FinalDollar[] = [];

  constructor(mode: "plain" | "lookahead" | "consume") {
    this.mode = mode;
  }
}

/**
 * A node as JavaScript source (no `u` flag). `final`: nothing follows the
 * node in the whole pattern (a `$` there may take the newline).
 */
function emit(node: PcreNode, e: Emit, final = true): string {
  switch (node.kind) {
    case "set":
      return jsSet(node.set);
    case "text":
      return jsChar(node.code);
    case "seq":
      return node.items.map((x, i) =>
        emit(x, e, final && i === node.items.length - 1)
      ).join("");
    case "alt":
      return node.branches.map((x) => emit(x, e, final)).join("|");
    case "group": {
      if (node.capture === null) return `(?:${emit(node.body, e, final)})`;
      e.groups++;
      e.captures++;
      // A `(\n?)` before this group would renumber it.
      if (e.groups !== node.capture) throw FALLBACK;
      e.open.push([node.capture, node.name]);
      const open = node.name === null ? "(" : `(?<${node.name}>`;
      const body = emit(node.body, e, final);
      e.open.pop();
      return `${open}${body})`;
    }
    case "look":
      if (e.mode === "consume" && node.ahead) throw FALLBACK;
      return `(?${node.ahead ? "" : "<"}${node.negative ? "!" : "="}${
        emit(node.body, e, false)
      })`;
    case "repeat": {
      const body = node.body;
      const inner = emit(body, e, final && node.max <= 1);
      const atom = body.kind === "set" || body.kind === "text" ||
          body.kind === "group" || body.kind === "backref"
        ? inner
        : `(?:${inner})`;
      const { min, max } = node;
      const q = min === 0 && max === Infinity
        ? "*"
        : min === 1 && max === Infinity
        ? "+"
        : min === 0 && max === 1
        ? "?"
        : max === Infinity
        ? `{${min},}`
        : min === max
        ? `{${min}}`
        : `{${min},${max}}`;
      return `${atom}${q}${node.lazy ? "?" : ""}`;
    }
    case "anchor":
      switch (node.which) {
        case "start":
          return "^";
        case "end":
          return "$";
        case "dollar":
          if (e.mode === "plain") return "$";
          if (e.mode === "lookahead") return "(?=\\n?$)";
          if (!final) throw FALLBACK;
          e.finals.push({
            index: ++e.groups,
            enclosing: e.open.map(([n]) => n),
            names: e.open.flatMap(([, name]) => name === null ? [] : [name]),
          });
          return "(\\n?)$";
        case "b":
          return "\\b";
        case "B":
          return "\\B";
      }
      break;
    case "backref":
      if (e.mode === "consume") throw FALLBACK;
      return `(?:\\${node.group})`;
    case "raw":
      if (e.mode === "consume") throw FALLBACK;
      return `(?:${node.source})`;
  }
  throw new Error("unreachable");
}
