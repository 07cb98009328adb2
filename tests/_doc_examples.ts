/**
 * The JSDoc examples of a source file, found and wrapped as `deno test --doc`
 * does (Deno's `cli/util/extract.rs`), so that `doc_examples_test.ts` can run
 * them all in one worker: Deno runs each example as a module of its own, in a
 * fresh worker, and each worker costs about 0.1 s of CPU however small the
 * example (tests/README.md, **Speed**).
 *
 * Deno's rules, kept here: a block comment that starts with `/**`; in it,
 * each fenced block whose first attribute is a JavaScript or TypeScript
 * language (`ts`, `js`, …) and that has no `ignore` attribute; each line
 * stripped of its `* ` prefix (and of a `# ` after it); the example's
 * `import` declarations stay at the top of its module, everything else runs
 * in the test's body; the documented module's exports are in scope unless
 * the example imports or declares the same name.
 *
 * @module
 */

/** One example: where it is and its source without the comment's prefixes. */
export interface DocExample {
  /** Deno's name for it: `<file URL>#<first line>-<line after the last>`. */
  name: string;
  /** The example's source, as Deno extracts it. */
  source: string;
}

const LANGUAGES = new Set([
  "js",
  "javascript",
  "mjs",
  "cjs",
  "jsx",
  "ts",
  "typescript",
  "mts",
  "cts",
  "tsx",
]);

/**
 * The runnable examples of one source file, in Deno's order.
 *
 * @param url The file's URL (names the examples).
 * @param text The file's text.
 * @returns The examples.
 *
 * @example Usage
 * ```ts
 * import { docExamples } from "./_doc_examples.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const fence = "`".repeat(3);
 * const text = `/**\n * @example\n * ${fence}ts\n * f(1);\n * ${fence}\n *\/\n`;
 * deepStrictEqual(docExamples("file:///a.ts", text), [
 *   { name: "file:///a.ts#3-6", source: "f(1);\n\n" },
 * ]);
 * ```
 */
export function docExamples(url: string, text: string): DocExample[] {
  const examples: DocExample[] = [];
  // Block comments only; strings holding `/**` would need a parser, and a
  // miss shows up as a count differing from `deno test --doc`'s.
  for (const comment of text.matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    const body = `*${comment[1]}`; // the parser's text: after `/*`
    const commentLine = text.slice(0, comment.index).split("\n").length - 1;
    for (const block of body.matchAll(/```([^\r\n]*)\r?\n([\s\S]*?)```/g)) {
      const attributes = block[1]!.split(" ");
      if (attributes.includes("ignore")) continue;
      if (!LANGUAGES.has(attributes[0]!)) continue;
      const offset = body.slice(0, block.index).split("\n").length - 1;
      const first = commentLine + offset + 1;
      const last = first + block[0].split("\n").length;
      let source = "";
      for (const line of block[2]!.split(/\r?\n/)) {
        const m = /(?:\* ?)((#!+).*)|(?:\* ?)(?:# ?)?(.*)/.exec(line);
        if (m === null) continue;
        source += `${m[1] ?? m[3]}\n`;
      }
      // `lines()` in Rust yields no last empty line after a final newline.
      if (block[2]!.endsWith("\n")) source = source.slice(0, -1);
      examples.push({ name: `${url}#${first}-${last}`, source });
    }
  }
  return examples;
}

/** The names an `import` declaration binds (`import type` binds none at run time, but none may be shadowed either). */
function importedNames(clause: string): string[] {
  const names: string[] = [];
  const braces = clause.match(/\{([\s\S]*)\}/);
  if (braces) {
    for (const part of braces[1]!.split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)
        .at(-1)!.trim();
      if (name) names.push(name);
    }
  }
  const outside = clause.replace(/\{[\s\S]*\}/, "").replace(/^type\s+/, "");
  const star = outside.match(/\*\s+as\s+([\w$]+)/);
  if (star) names.push(star[1]!);
  const plain = outside.replace(/\*\s+as\s+[\w$]+/, "").split(",")
    .map((s) => s.trim()).filter((s) => /^[\w$]+$/.test(s));
  names.push(...plain);
  return names;
}

/**
 * The module that runs one example: its imports (relative specifiers made
 * absolute from the documented file) at the top, the documented module's
 * exports it does not import in an outer scope, and its statements in
 * `run()`, in a block of their own so that its declarations shadow those
 * exports, as Deno's generated test does.
 *
 * @param base The documented file's URL.
 * @param source The example's source ({@linkcode DocExample}).
 * @param exports The names the documented module exports.
 * @returns The module's text.
 * @throws When the example holds what Deno would run differently (a
 * hashbang, an `export`, its own `Deno.test`).
 */
export function exampleModule(
  base: string,
  source: string,
  exports: string[],
): string {
  if (/^#!/.test(source) || /^\s*Deno\.test\(/m.test(source)) {
    throw new Error(`Cannot run an example with a hashbang or Deno.test`);
  }
  const imports: string[] = [];
  const imported = new Set<string>();
  // Top-level `import` declarations (column 0, as the examples write them),
  // over as many lines as their braces take.
  const body = source.replace(
    /^import\s+(?:([\s\S]*?)\s+from\s+)?(["'])([^"']+)\2\s*(?:with\s*\{[^}]*\}\s*)?;?/gm,
    (_all, clause: string | undefined, quote: string, spec: string) => {
      const resolved = spec.startsWith("./") || spec.startsWith("../")
        ? new URL(spec, base).href
        : spec;
      imports.push(
        clause === undefined
          ? `import ${quote}${resolved}${quote};`
          : `import ${clause} from ${quote}${resolved}${quote};`,
      );
      for (const name of importedNames(clause ?? "")) imported.add(name);
      return "";
    },
  );
  if (/^export\s/m.test(body)) {
    throw new Error(`Cannot run an example that exports`);
  }
  const scope = exports.filter((name) =>
    name !== "default" && /^[A-Za-z_$][\w$]*$/.test(name) &&
    !imported.has(name)
  );
  return [
    ...imports,
    `import * as documented from ${JSON.stringify(base)};`,
    `export async function run(): Promise<void> {`,
    `  const { ${scope.join(", ")} } = documented;`,
    `  {`,
    body,
    `  }`,
    `}`,
    "",
  ].join("\n");
}
