/**
 * A small reader of nginx.conf files for the corpus tools: the directive
 * tree of a file with its `include`s followed. It is independent of the
 * gateway's own reader on purpose, so the harness keeps measuring while the
 * engine changes; it follows `ngx_conf_read_token` (src/core/ngx_conf_file.c)
 * only as far as the corpus needs: blanks, `"`/`'` quoting with `\`
 * escapes, `#` comments at the start of a word, `;`, `{`, `}`.
 *
 * @module
 */

import { dirname, isAbsolute, join } from "node:path";

/** One directive, with its block when it has one. */
export interface Directive {
  /** The name, e.g. `location`. */
  name: string;
  /** The arguments, unquoted. */
  args: string[];
  /** The directives inside its `{ }`, if it opens a block. */
  block?: Directive[];
  /** The file it was read from. */
  file: string;
  /** Its first line. */
  line: number;
}

interface Token {
  word: string;
  line: number;
  /** A quoted word is never one of `;`, `{`, `}`. */
  quoted: boolean;
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  const placeholderAt = (at: number) =>
    text.startsWith("{{", at) &&
    /^\{\{[A-Z_0-9]+\}\}/.test(text.slice(at, at + 40));
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\n") line++;
    if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    const placeholder = c === "{" && text[i + 1] === "{";
    if (!placeholder && (c === ";" || c === "{" || c === "}")) {
      out.push({ word: c, line, quoted: false });
      i++;
      continue;
    }
    const start = line;
    let word = "";
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c) {
        if (text[i] === "\\" && i + 1 < text.length) {
          const next = text[i + 1]!;
          word += next === c || next === "\\" ? next : `\\${next}`;
          i += 2;
          continue;
        }
        if (text[i] === "\n") line++;
        word += text[i];
        i++;
      }
      i++;
      out.push({ word, line: start, quoted: true });
      continue;
    }
    // nginx's blanks are these four bytes only: a no-break space (U+00A0,
    // which `\s` matches) is part of a word, as in ngx_conf_read_token.
    while (
      i < text.length && !/[ \t\r\n;{}]/.test(text[i]!) || placeholderAt(i)
    ) {
      // `${name}` is a variable, not a block; `{{NAME}}` a corpus placeholder.
      const open = placeholderAt(i)
        ? "{{"
        : text.startsWith("${", i)
        ? "${"
        : "";
      if (open !== "") {
        const close = open === "{{" ? "}}" : "}";
        const end = text.indexOf(close, i);
        word += text.slice(i, end + close.length);
        i = end + close.length;
        continue;
      }
      word += text[i];
      i++;
    }
    out.push({ word, line: start, quoted: false });
  }
  return out;
}

/** Expands `*` in the last part of an include path, as nginx's glob does. */
function expand(pattern: string): string[] {
  if (!pattern.includes("*")) return [pattern];
  const dir = dirname(pattern);
  const re = new RegExp(
    "^" +
      pattern.slice(dir.length + 1).replace(/[.+?^$()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*") +
      "$",
  );
  try {
    return [...Deno.readDirSync(dir)]
      .filter((e) => e.isFile && re.test(e.name))
      .map((e) => join(dir, e.name))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Reads a configuration file into its directive tree, following `include`
 * (relative to the main file's folder, nginx's conf prefix).
 *
 * @param path The main file.
 * @param confDir The folder relative includes resolve against.
 * @param mapPath Turns an include's argument into a path (placeholders).
 * @returns The top-level directives; an unreadable include is skipped.
 */
export function readConfTree(
  path: string,
  confDir: string = dirname(path),
  mapPath: (arg: string) => string = (arg) => arg,
): Directive[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return [];
  }
  const list = tokens(text);
  let at = 0;
  const parse = (): Directive[] => {
    const out: Directive[] = [];
    let words: Token[] = [];
    while (at < list.length) {
      const t = list[at++]!;
      if (!t.quoted && t.word === "}") return out;
      if (!t.quoted && (t.word === ";" || t.word === "{")) {
        if (words.length === 0) continue;
        const d: Directive = {
          name: words[0]!.word,
          args: words.slice(1).map((w) => w.word),
          file: path,
          line: words[0]!.line,
        };
        if (t.word === "{") d.block = parse();
        words = [];
        if (d.name === "include" && d.args.length === 1 && !d.block) {
          const arg = mapPath(d.args[0]!);
          const target = isAbsolute(arg) ? arg : join(confDir, arg);
          out.push(d);
          for (const file of expand(target)) {
            out.push(...readConfTree(file, confDir, mapPath));
          }
          continue;
        }
        out.push(d);
        continue;
      }
      words.push(t);
    }
    return out;
  };
  return parse();
}

/** Every directive of a tree with its enclosing directives, depth first. */
export function* walk(
  tree: Directive[],
  parents: Directive[] = [],
): Generator<{ directive: Directive; parents: Directive[] }> {
  for (const directive of tree) {
    yield { directive, parents };
    if (directive.block) {
      yield* walk(directive.block, [...parents, directive]);
    }
  }
}
