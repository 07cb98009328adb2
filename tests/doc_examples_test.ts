/**
 * Every JSDoc example under src/ and tests/ runs, as `deno test --doc` ran
 * them, but all in this one worker: Deno gives each example a worker of its
 * own, and each new worker costs about 0.1 s of CPU before the example's first
 * line (Deno 2.9's test runner fills an 80 MB array for `Deno.bench` in every
 * worker), which made the examples a seventh of the suite's CPU time. Their
 * types are checked by `deno task check` (`deno check --doc`), as before.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { docExamples, exampleModule } from "./_doc_examples.ts";

const ROOT = new URL("..", import.meta.url);
/** The folders `deno test --doc` was given; the browser driver is excluded in deno.json. */
const FOLDERS = ["src", "tests"];
const EXCLUDED = ["tests/browser_driver/"];

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  const entries: Deno.DirEntry[] = [];
  for await (const entry of Deno.readDir(dir)) entries.push(entry);
  entries.sort((a, b) => a.name < b.name ? -1 : 1);
  for (const entry of entries) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    const path = url.href.slice(ROOT.href.length);
    if (EXCLUDED.some((prefix) => path.startsWith(prefix))) continue;
    if (entry.isDirectory) yield* sourceFiles(url);
    else if (/\.(ts|js|mjs|mts|tsx|jsx)$/.test(entry.name)) yield url;
  }
}

Deno.test("every JSDoc example under src/ and tests/ runs", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "doc-examples-" });
  let count = 0;
  try {
    for (const folder of FOLDERS) {
      for await (const file of sourceFiles(new URL(`${folder}/`, ROOT))) {
        const examples = docExamples(
          file.href,
          await Deno.readTextFile(file),
        );
        if (examples.length === 0) continue;
        // A specifier computed at run time: `deno test` leaves it out of its
        // type check (`deno task check` checks the examples).
        const documented = file.href;
        const exports = Object.keys(await import(documented));
        for (const example of examples) {
          count++;
          const path = join(dir, `example_${count}.ts`);
          await Deno.writeTextFile(
            path,
            exampleModule(file.href, example.source, exports),
          );
          const label = example.name.slice(ROOT.href.length);
          await t.step(label, async () => {
            const module = await import(pathToFileURL(path).href);
            await module.run();
          });
        }
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  ok(count > 0, "examples were found");
});
