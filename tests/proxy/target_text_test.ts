import { strictEqual } from "node:assert/strict";
import { requestTargetText } from "../../src/proxy/target_text.ts";

Deno.test("requestTargetText() writes byte strings as the bytes they hold, and never a second line", () => {
  const cases: [string, string, string][] = [
    ["plain ASCII goes as it is", "/a/b?c=d", "/a/b?c=d"],
    ["UTF-8 bytes become their text", "/\xe4\xb8\xad?q", "/\u4e2d?q"],
    ["bytes that are not UTF-8 are escaped", "/\xff\xfe", "/%FF%FE"],
    ["text already wider than bytes stays", "/\u4e2d", "/\u4e2d"],
    ["CR and LF are escaped", "/a\r\nHost: x", "/a%0D%0AHost:%20x"],
    ["NUL, tab and DEL are escaped", "/\0\t\x7f", "/%00%09%7F"],
  ];
  for (const [what, input, expected] of cases) {
    strictEqual(requestTargetText(input), expected, what);
  }
});
