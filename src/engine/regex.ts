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
import { type ParsedPcre, PcreError, type PcreNode, parsePcre } from "./pcre_parse.ts";
import { jsChar, jsSet } from "./pcre_sets.ts";

/**
 * An expression with a `$` (or `\Z`): PCRE2's matches at the end and before
 * a newline that ends the subject. JavaScript's `$` is the first; a
 * lookahead (`(?=\n?$)`) is both but keeps V8's linear engine out, so it
 * runs only on a subject that ends in a newline (a URI with `%0A`).
 */
class DollarRegExp extends RegExp {
  readonly #atNewline: RegExp;

  constructor(source: string, flags: string, atNewline: RegExp) {
    super(source, flags);
    this.#atNewline = atNewline;
  }

  /** PCRE2's match of `subject`. */
  override exec(subject: string): RegExpExecArray | null {
    return subject.charCodeAt(subject.length - 1) === 0x0a
      ? this.#atNewline.exec(subject)
      : super.exec(subject);
  }
}

/**
 * Compiles a location, `rewrite`, `if`, `map` or other regex of nginx.conf.
 *
 * @param source The expression as written.
 * @param caseless PCRE2_CASELESS: `~*`, `server_name`, every location
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
  // A caseless backreference needs the flag (the letters are spelled out).
  const flags = parsed.caselessBackref ? "i" : "";
  const plain = emit(parsed.root, false);
  const atNewline = emit(parsed.root, true);
  if (plain === atNewline) return new RegExp(plain, flags);
  return new DollarRegExp(plain, flags, new RegExp(atNewline, flags));
}

/** A node as JavaScript source (no `u` flag); `atNewline`: `$` as PCRE2's lookahead. */
function emit(node: PcreNode, atNewline: boolean): string {
  switch (node.kind) {
    case "set":
      return jsSet(node.set);
    case "text":
      return jsChar(node.code);
    case "seq":
      return node.items.map((x) => emit(x, atNewline)).join("");
    case "alt":
      return node.branches.map((x) => emit(x, atNewline)).join("|");
    case "group": {
      const open = node.capture === null
        ? "(?:"
        : node.name === null
        ? "("
        : `(?<${node.name}>`;
      return `${open}${emit(node.body, atNewline)})`;
    }
    case "look":
      return `(?${node.ahead ? "" : "<"}${node.negative ? "!" : "="}${
        emit(node.body, atNewline)
      })`;
    case "repeat": {
      const body = node.body;
      const atom = body.kind === "set" || body.kind === "text" ||
          body.kind === "group" || body.kind === "backref"
        ? emit(body, atNewline)
        : `(?:${emit(body, atNewline)})`;
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
          return atNewline ? "(?=\\n?$)" : "$";
        case "b":
          return "\\b";
        case "B":
          return "\\B";
      }
      break;
    case "backref":
      return `(?:\\${node.group})`;
    case "raw":
      return `(?:${node.source})`;
  }
  throw new Error("unreachable");
}
