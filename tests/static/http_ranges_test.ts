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
    ["bytes=100-", 100, "unsatisfiable"],
    ["bytes=-0", 100, "unsatisfiable"],
    ["bytes=0-1,5-6", 100, null],
    ["items=0-1", 100, null],
  ];
  for (const [header, size, expected] of cases) {
    await t.step(
      `${header} of ${size}`,
      () => deepStrictEqual(parseRange(header, size), expected),
    );
  }
});

// Each row was answered by nginx 1.22 on loopback for a 1,000-byte static
// file (0 bytes where the size says so): 206 is the range, 416 is
// "unsatisfiable", 200 is null.
Deno.test("parseRange() answers every syntax as nginx 1.22 does", async (t) => {
  const cases: [string, number, ReturnType<typeof parseRange>][] = [
    ["bytes=5-1", 1000, "unsatisfiable"],
    ["bytes=0x1-2", 1000, "unsatisfiable"],
    ["bytes=+1-2", 1000, "unsatisfiable"],
    ["bytes=--1", 1000, "unsatisfiable"],
    ["bytes=1-2-3", 1000, "unsatisfiable"],
    ["bytes=,", 1000, "unsatisfiable"],
    ["bytes=0-99999999999999999999", 1000, "unsatisfiable"],
    ["bytes=", 1000, null],
    ["bytes= ", 1000, null],
    ["bytes =0-1", 1000, null],
    ["BYTES=0-1", 1000, { start: 0, end: 1 }],
    ["bytes= 0 - 1 ", 1000, { start: 0, end: 1 }],
    ["bytes=-0", 1000, "unsatisfiable"],
    ["bytes=1000-", 1000, "unsatisfiable"],
    ["bytes=10-5,0-1", 1000, { start: 0, end: 1 }],
    ["bytes=-", 1000, "unsatisfiable"],
    ["bytes=abc", 1000, "unsatisfiable"],
    ["bytes=0-1,", 1000, "unsatisfiable"],
    ["bytes=0-1,abc", 1000, "unsatisfiable"],
    ["bytes=9223372036854775807-", 1000, "unsatisfiable"],
    ["bytes=9223372036854775808-", 1000, "unsatisfiable"],
    ["bytes=-9223372036854775807", 1000, { start: 0, end: 999 }],
    ["bytes=0-9223372036854775807", 1000, { start: 0, end: 999 }],
    ["bytes=0-0,0-999", 1000, null],
    ["bytes=0-1x", 1000, "unsatisfiable"],
    ["bytes=0-", 0, null],
    ["bytes=-1", 0, null],
    ["bytes=-0", 0, null],
    ["bytes=5-", 0, "unsatisfiable"],
    ["bytes=0-0", 0, null],
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
