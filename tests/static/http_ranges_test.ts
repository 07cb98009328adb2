import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ifRangeMatches, parseRange } from "../../src/static/http_ranges.ts";

Deno.test("parseRange() reads single byte ranges (RFC 9110 §14)", async (t) => {
  const cases: [string | null, number, ReturnType<typeof parseRange>][] = [
    [null, 100, null],
    ["bytes=0-0", 100, { start: 0, end: 0 }],
    ["bytes=10-19", 100, { start: 10, end: 19 }],
    ["bytes=90-", 100, { start: 90, end: 99 }],
    ["bytes=90-500", 100, { start: 90, end: 99 }],
    ["bytes=-10", 100, { start: 90, end: 99 }],
    ["bytes=-500", 100, { start: 0, end: 99 }],
    ["BYTES = 1 - 2", 100, { start: 1, end: 2 }],
    ["bytes=100-", 100, "unsatisfiable"],
    ["bytes=-0", 100, "unsatisfiable"],
    ["bytes=0-", 0, "unsatisfiable"],
    ["bytes=5-1", 100, null],
    ["bytes=0-1,5-6", 100, null],
    ["items=0-1", 100, null],
    ["bytes=-", 100, null],
    ["bytes=abc", 100, null],
  ];
  for (const [header, size, expected] of cases) {
    await t.step(
      `${header} of ${size}`,
      () => deepStrictEqual(parseRange(header, size), expected),
    );
  }
});

Deno.test("ifRangeMatches() compares a strong ETag or the exact date", () => {
  const etag = '"5f-1a"';
  const date = "Sat, 21 Nov 2026 07:46:35 GMT";
  strictEqual(ifRangeMatches(null, etag, date), true);
  strictEqual(ifRangeMatches('"5f-1a"', etag, date), true);
  strictEqual(ifRangeMatches('"other"', etag, date), false);
  strictEqual(ifRangeMatches(date, etag, date), true);
  strictEqual(
    ifRangeMatches("Sun, 22 Nov 2026 07:46:35 GMT", etag, date),
    false,
  );
});
