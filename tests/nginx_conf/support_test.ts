import { strictEqual } from "node:assert/strict";
import { supportList } from "../../src/nginx_conf/support.ts";

Deno.test("the README lists every directive as the table decides it", async () => {
  const readme = await Deno.readTextFile(
    new URL("../../README.md", import.meta.url),
  );
  const start = "<!-- directives:start -->\n";
  const listed = readme.slice(
    readme.indexOf(start) + start.length,
    readme.indexOf("<!-- directives:end -->"),
  );
  // deno fmt wraps the README's lines: compared word for word.
  const words = (text: string) => text.replace(/\s+/g, " ").trim();
  strictEqual(
    words(listed),
    words(supportList()),
    "run: deno run scripts/directives.ts",
  );
});
