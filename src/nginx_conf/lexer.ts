/**
 * nginx's configuration tokenizer, a transcription of `ngx_conf_read_token`
 * (src/core/ngx_conf_file.c, nginx 1.22): words separated by blanks, `"` and
 * `'` quoting, `\` escapes, `#` comments to the end of the line, and the
 * statement ends `;`, `{` and `}`. It keeps nginx's quirks on purpose, so a
 * file nginx accepts reads the same here: `\n`, `\t` and `\r` become control
 * characters in every word (a Windows path such as `C:\nginx` is mangled
 * exactly as nginx mangles it), `${` does not open a block, and a closing
 * quote must be followed by a blank, `;`, `{` or `)`.
 *
 * @module
 */

/** One statement: its words and how it ended. */
export interface Statement {
  /** The words, unquoted and unescaped; empty for a lone `}` or the end. */
  words: string[];
  /** `;` a simple directive, `{` a block opens, `}` a block closes, `eof`. */
  end: ";" | "{" | "}" | "eof";
  /** The line nginx reports for it: where its last character was read. */
  line: number;
}

/** A syntax error, with the line nginx reports. */
export interface LexError {
  /** nginx's words, e.g. `unexpected "}"`. */
  message: string;
  /** The line. */
  line: number;
}

const BLANK = new Set([" ", "\t", "\r", "\n"]);

/** Unescapes a word as `ngx_conf_read_token` copies it. */
function unescape(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\" && i + 1 < raw.length) {
      const next = raw[i + 1]!;
      if (next === '"' || next === "'" || next === "\\") {
        out += next;
        i++;
        continue;
      }
      const control = { t: "\t", r: "\r", n: "\n" }[next];
      if (control !== undefined) {
        out += control;
        i++;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/**
 * Splits a configuration text into statements, as nginx reads it.
 *
 * @param text The file's text.
 * @returns The statements in order (the last has `end: "eof"`), or the
 * first syntax error.
 *
 * @example Usage
 * ```ts
 * import { tokenize } from "./lexer.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(tokenize("root 'my html';"), [
 *   { words: ["root", "my html"], end: ";", line: 1 },
 *   { words: [], end: "eof", line: 1 },
 * ]);
 * ```
 */
export function tokenize(text: string): Statement[] | LexError {
  const out: Statement[] = [];
  for (const item of statements(text)) {
    if ("message" in item) return item;
    out.push(item);
  }
  return out;
}

/**
 * The statements of a configuration text one at a time, as
 * `ngx_conf_parse` asks `ngx_conf_read_token` for the next one: the caller
 * holds only the statement it is working on, so a file of a million short
 * lines costs the directives kept, not a million statements at once, and an
 * error in an early statement is reported before a syntax error further on,
 * as nginx reports it.
 *
 * @param text The file's text.
 * @returns A generator of statements ending with `end: "eof"`, or with the
 * first syntax error.
 *
 * @example Usage
 * ```ts
 * import { statements } from "./lexer.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const next = statements("gzip on; }").next().value;
 * strictEqual(next !== undefined && "words" in next && next.words[0], "gzip");
 * ```
 */
export function* statements(
  text: string,
): Generator<Statement | LexError, void, undefined> {
  let words: string[] = [];
  let line = 1;
  let start = 0;
  let lastSpace = true;
  let needSpace = false;
  let sharpComment = false;
  let quoted = false;
  let dQuoted = false;
  let sQuoted = false;
  let variable = false;
  const error = (message: string): LexError => ({ message, line });
  const finish = (end: Statement["end"]): Statement => {
    const statement = { words, end, line };
    words = [];
    return statement;
  };

  for (let pos = 0; pos < text.length; pos++) {
    const ch = text[pos]!;
    if (ch === "\n") {
      line++;
      sharpComment = false;
    }
    if (sharpComment) continue;
    if (quoted) {
      quoted = false;
      continue;
    }
    if (needSpace) {
      if (BLANK.has(ch)) {
        lastSpace = true;
        needSpace = false;
        continue;
      }
      if (ch === ";" || ch === "{") {
        yield finish(ch);
        needSpace = false;
        lastSpace = true;
        continue;
      }
      if (ch !== ")") return yield error(`unexpected "${ch}"`);
      lastSpace = true;
      needSpace = false;
    }
    if (lastSpace) {
      start = pos;
      if (BLANK.has(ch)) continue;
      switch (ch) {
        case ";":
        case "{":
          if (words.length === 0) return yield error(`unexpected "${ch}"`);
          yield finish(ch);
          continue;
        case "}":
          if (words.length !== 0) return yield error('unexpected "}"');
          yield finish("}");
          continue;
        case "#":
          sharpComment = true;
          continue;
        case "\\":
          quoted = true;
          lastSpace = false;
          continue;
        case '"':
          start++;
          dQuoted = true;
          lastSpace = false;
          continue;
        case "'":
          start++;
          sQuoted = true;
          lastSpace = false;
          continue;
        case "$":
          variable = true;
          lastSpace = false;
          continue;
        default:
          lastSpace = false;
      }
      continue;
    }
    if (ch === "{" && variable) continue;
    variable = false;
    if (ch === "\\") {
      quoted = true;
      continue;
    }
    if (ch === "$") {
      variable = true;
      continue;
    }
    let found = false;
    if (dQuoted) {
      if (ch === '"') {
        dQuoted = false;
        needSpace = true;
        found = true;
      }
    } else if (sQuoted) {
      if (ch === "'") {
        sQuoted = false;
        needSpace = true;
        found = true;
      }
    } else if (BLANK.has(ch) || ch === ";" || ch === "{") {
      lastSpace = true;
      found = true;
    }
    if (!found) continue;
    words.push(unescape(text.slice(start, pos)));
    if (ch === ";" || ch === "{") yield finish(ch);
  }
  // The end of the file: nginx accepts it only between statements.
  if (words.length > 0 || !lastSpace) {
    return yield error('unexpected end of file, expecting ";" or "}"');
  }
  yield finish("eof");
}
