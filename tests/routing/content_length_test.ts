import { deepStrictEqual } from "node:assert/strict";
import { parseContentLength } from "../../src/routing/content_length.ts";

const INVALID = {
  kind: "invalid",
  message: 'client sent invalid "Content-Length" header',
};

Deno.test("parseContentLength() accepts one run of digits only", async (t) => {
  // What reaches the handler: Deno.serve already answers 400 to "+5", "-1",
  // "0x10", "1e3", "", "5,6" and single-field lists; it joins identical
  // fields as "5, 5" and accepts any u64 (hostile_input_test.ts).
  const cases: [string | null, unknown][] = [
    [null, { kind: "none" }],
    ["0", { kind: "length", length: 0, digits: "0" }],
    ["05", { kind: "length", length: 5, digits: "05" }],
    ["1048577", { kind: "length", length: 1048577, digits: "1048577" }],
    [
      "9223372036854775807",
      {
        kind: "length",
        length: 9223372036854775807,
        digits: "9223372036854775807",
      },
    ],
    ["9223372036854775808", INVALID],
    ["18446744073709551615", INVALID],
    ["99999999999999999999999", INVALID],
    [
      "5, 5",
      {
        kind: "invalid",
        message:
          'client sent duplicate header line: "Content-Length: 5", previous value: "Content-Length: 5"',
      },
    ],
    [
      "5, 5, 5",
      {
        kind: "invalid",
        message:
          'client sent duplicate header line: "Content-Length: 5", previous value: "Content-Length: 5"',
      },
    ],
    ["5,6", INVALID],
    [" 5", INVALID],
    ["5 ", INVALID],
    ["+5", INVALID],
    ["-1", INVALID],
    ["0x10", INVALID],
    ["1e3", INVALID],
    ["1.0", INVALID],
    ["", INVALID],
    ["NaN", INVALID],
    ["٣", INVALID],
  ];
  for (const [value, expected] of cases) {
    await t.step(JSON.stringify(value), () => {
      deepStrictEqual(parseContentLength(value), expected);
    });
  }
});
