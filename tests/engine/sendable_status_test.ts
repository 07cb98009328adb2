/**
 * A status nginx sends but the runtime cannot (`Response` takes 200-599
 * only) is refused at load, wherever a configuration names one, instead of
 * a 500 and an `[alert]` on every request that meets it.
 */
import { deepStrictEqual } from "node:assert/strict";
import { refusals } from "./_conf.ts";

const WHY = "the gateway's runtime sends a status from 200 to 599 only";

/** [the location's directive, the refusal or `null`]. */
const CASES: [string, string | null][] = [
  ["return 999;", `"return 999" is not supported: ${WHY}`],
  ["return 600 text;", `"return 600" is not supported: ${WHY}`],
  ["return 103;", `"return 103" is not supported: ${WHY}`],
  ["return 0;", `"return 0" is not supported: ${WHY}`],
  ["if ($args) { return 700; }", `"return 700" is not supported: ${WHY}`],
  ["error_page 404 =999 /x;", `"error_page =999" is not supported: ${WHY}`],
  ["error_page 404 =150 /x;", `"error_page =150" is not supported: ${WHY}`],
  ["return 200;", null],
  ["return 599;", null],
  ["return 444;", null],
  ["error_page 404 =200 /x;", null],
  ["error_page 404 = /x;", null],
  ["return 1000;", 'invalid return code "1000"'],
];

Deno.test("a status the runtime cannot send is refused at load", async (t) => {
  for (const [directive, refusal] of CASES) {
    await t.step(directive, () => {
      deepStrictEqual(
        refusals(`http { server { listen 80; location / { ${directive} } } }`),
        refusal === null ? [] : [`${refusal} in /n/conf/nginx.conf:2`],
      );
    });
  }
});
