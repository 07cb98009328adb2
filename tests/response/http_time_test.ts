import { strictEqual } from "node:assert/strict";
import { httpTimeMs } from "../../src/response/mod.ts";

Deno.test("httpTimeMs() reads the three HTTP date forms as ngx_parse_http_time, nothing else", async (t) => {
  const second = Date.UTC(2026, 10, 25, 15, 4, 31);
  const cases: [string, number | null][] = [
    ["Wed, 25 Nov 2026 15:04:31 GMT", second],
    ["Wednesday, 25-Nov-26 15:04:31 GMT", second],
    ["Wed Nov 25 15:04:31 2026", second],
    ["Thu Jan  1 00:00:00 1970", 0],
    ["Sunday, 01-Jan-69 00:00:00 GMT", Date.UTC(2069, 0, 1)],
    ["0", null],
    ["-1", null],
    ["", null],
    ["2026", null],
    ["Wed, 31 Apr 2026 00:00:00 GMT", null],
    ["Wed, 25 Nov 2026 24:00:00 GMT", null],
    ["Wed, 25 Xyz 2026 15:04:31 GMT", null],
    ["Wed, 25 Nov 1969 15:04:31 GMT", null],
  ];
  for (const [text, want] of cases) {
    await t.step(
      JSON.stringify(text),
      () => strictEqual(httpTimeMs(text), want),
    );
  }
});
