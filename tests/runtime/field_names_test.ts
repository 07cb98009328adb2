import { deepStrictEqual } from "node:assert/strict";
import {
  type FieldNames,
  ignoredField,
  underscoredField,
} from "../../src/runtime/field_names.ts";

const OFF_ON: FieldNames = { underscores: false, ignoreInvalid: true };
const ON_ON: FieldNames = { underscores: true, ignoreInvalid: true };
const OFF_OFF: FieldNames = { underscores: false, ignoreInvalid: false };
const ON_OFF: FieldNames = { underscores: true, ignoreInvalid: false };

/**
 * A name, and whether nginx 1.22 drops it under each pair of
 * `underscores_in_headers` / `ignore_invalid_headers` (off on, on on,
 * off off, on off), per ngx_http_parse_header_line: letters, digits and
 * `-` are valid, `_` only with underscores on, any other token character
 * (which HTTP and `Deno.serve` allow) is invalid.
 */
const NAMES: [string, [boolean, boolean, boolean, boolean]][] = [
  ["x-token", [false, false, false, false]],
  ["accept", [false, false, false, false]],
  ["x-9", [false, false, false, false]],
  ["X-Upper", [false, false, false, false]],
  ["x_token", [true, false, false, false]],
  ["_", [true, false, false, false]],
  ["a-b_c", [true, false, false, false]],
  ["x.dot", [true, true, false, false]],
  ["x_tok.en", [true, true, false, false]],
  ...[..."!#$%&'*+^`|~"].map((
    c,
  ): [string, [boolean, boolean, boolean, boolean]] => [
    `x${c}y`,
    [true, true, false, false],
  ]),
];

Deno.test("ignoredField: the names nginx drops, per setting", () => {
  const got = NAMES.map(([name]) => [
    name,
    [OFF_ON, ON_ON, OFF_OFF, ON_OFF].map((s) => ignoredField(name, s)),
  ]);
  deepStrictEqual(got, NAMES);
  // Absent settings are nginx's defaults.
  deepStrictEqual(
    NAMES.map(([name]) => ignoredField(name)),
    NAMES.map(([, [atDefault]]) => atDefault),
  );
});

Deno.test("underscoredField: $http_NAME reads the first kept field by its name with - as _", () => {
  const flat = ["a-b_c", "1", "a_b-c", "2", "x.tok", "3"];
  const headers = new Headers([["a_b-c", "2"], ["a-b_c", "1"]]);
  /** [fields, suffix, settings, value] */
  const cases: [Headers | string[], string, FieldNames, string | null][] = [
    [flat, "a_b_c", ON_ON, "1"],
    [flat, "a_b_c", OFF_OFF, "1"],
    // Only names nginx keeps are read: with underscores off (and invalid
    // fields dropped) no field with `_` is.
    [flat, "a_b_c", OFF_ON, null],
    [flat, "x_tok", ON_OFF, null],
    [flat, "none", ON_ON, null],
    // Headers iterate sorted: `a-b_c` before `a_b-c`.
    [headers, "a_b_c", ON_ON, "1"],
    [new Headers([["a_b", "u"]]), "a_b", OFF_ON, null],
  ];
  deepStrictEqual(
    cases.map(([fields, suffix, names]) =>
      underscoredField(fields, suffix, names)
    ),
    cases.map(([, , , value]) => value),
  );
});
