/**
 * The corpus harness's own reader of nginx.conf files
 * (`_corpus/conf_tree.ts`): its words are nginx's, so the probes it builds
 * are for the file nginx runs.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { readConfTree } from "./_corpus/mod.ts";

/** A file's text, and the `server_name` arguments nginx reads from it. */
const CASES: [string, string[]][] = [
  ["server_name  a b;", ["a", "b"]],
  ["server_name\ta\r\n b;", ["a", "b"]],
  // nginx's blanks are four ASCII bytes (ngx_conf_read_token): a no-break
  // space typed before a name (a real station file) is part of the name.
  ["server_name  \u00a010.3.142.130;", ["\u00a010.3.142.130"]],
  ["server_name a\u00a0b\u2003c;", ["a\u00a0b\u2003c"]],
  ["server_name a\fb\vc;", ["a\fb\vc"]],
];

Deno.test("the corpus reader splits words where nginx does, and only there", async () => {
  const dir = await Deno.makeTempDir({ prefix: "corpus-tree-" });
  try {
    const got: string[][] = [];
    for (const [text] of CASES) {
      const file = join(dir, "nginx.conf");
      await Deno.writeTextFile(file, `http { server { ${text} } }\n`);
      const server = readConfTree(file)[0]?.block?.[0];
      got.push(server?.block?.[0]?.args ?? []);
    }
    deepStrictEqual(got, CASES.map(([, words]) => words));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
