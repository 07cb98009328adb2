/**
 * The corpus tally's forms (`_corpus/forms.ts`): a location's kind is the one
 * nginx reads, so the tally counts regex and `^~` locations written with the
 * modifier glued to the name (real station files do) as what they are.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { formOf, readConfTree, walk } from "./_corpus/mod.ts";

/** A location as a file writes it, and the forms of it and its proxy_pass. */
const CASES: [string, string[]][] = [
  ["location / { proxy_pass http://{{UPSTREAM}}; }", [
    "location prefix",
    "proxy_pass http://HOST:PORT (in location /)",
  ]],
  ["location ~ /kyl/ { proxy_pass http://{{UPSTREAM}}; }", [
    "location ~",
    "proxy_pass http://HOST:PORT (in a regex location)",
  ]],
  // nginx splits a modifier glued to its name (ngx_http_core_location).
  ["location ~^/kyl/ { proxy_pass http://{{UPSTREAM}}; }", [
    "location ~",
    "proxy_pass http://HOST:PORT (in a regex location)",
  ]],
  ["location ~*\\.(png|jpg)$ { root html; }", ["location ~*", "root RELATIVE"]],
  ["location ^~/cross/{ proxy_pass http://{{UPSTREAM}}/; }", [
    "location ^~",
    "proxy_pass http://HOST:PORT/ (in location ^~ /x/)",
  ]],
  ["location =/50x.html { root html; }", [
    "location = /50x.html",
    "root RELATIVE",
  ]],
  ["location = /50x.html { root html; }", [
    "location = /50x.html",
    "root RELATIVE",
  ]],
  ["location @router { proxy_pass http://{{UPSTREAM}}; }", [
    "location @name",
    "proxy_pass http://HOST:PORT (in a named location)",
  ]],
];

Deno.test("the corpus tally reads a location's modifier as nginx does, glued or not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "corpus-forms-" });
  try {
    const got: string[][] = [];
    for (const [text] of CASES) {
      const file = join(dir, "nginx.conf");
      await Deno.writeTextFile(file, `http { server { ${text} } }\n`);
      const forms: string[] = [];
      for (const { directive, parents } of walk(readConfTree(file))) {
        if (["http", "server"].includes(directive.name)) continue;
        forms.push(formOf(directive, parents, new Set()));
      }
      got.push(forms);
    }
    deepStrictEqual(got, CASES.map(([, forms]) => forms));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
