import { strictEqual } from "node:assert/strict";
import { supportList } from "../../src/nginx_conf/support.ts";

Deno.test("the README lists every directive as the table decides it", async () => {
  const readme = await Deno.readTextFile(
    new URL("../../README.md", import.meta.url),
  );
  // The start marker says how to write the list again. deno fmt leaves the
  // list as written (one line a group, in a deno-fmt-ignore range), so it is
  // compared to the letter.
  const start = /<!-- directives:start[^>]*-->\n\n/.exec(readme);
  const end = readme.indexOf("\n<!-- directives:end -->");
  strictEqual(start !== null && end > start.index, true, "the markers");
  strictEqual(
    readme.slice(start!.index + start![0].length, end),
    supportList(),
    "run: deno run scripts/directives.ts",
  );
  strictEqual(
    readme.slice(end).startsWith(
      "\n<!-- directives:end -->\n<!-- deno-fmt-ignore-end -->",
    ) &&
      readme.slice(0, start!.index).endsWith(
        "<!-- deno-fmt-ignore-start -->\n",
      ),
    true,
    "the list stands in a deno-fmt-ignore range",
  );
});
