import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  copyFields,
  derivedRequest,
  firstLine,
  hasRepeatedLines,
  keepFirstLines,
} from "../../src/runtime/field_lines.ts";
import { readFields } from "../../src/routing/read_fields.ts";

/** Each row: the lines, a name, and the value nginx 1.22 reads for it. */
const ROWS: [[string, string][], string, string | null][] = [
  [[["Range", "bytes=0-1"], ["Range", "bytes=2-3"]], "range", "bytes=0-1"],
  [[["User-Agent", ""], ["User-Agent", "b"]], "user-agent", ""],
  [[["User-Agent", "a"], ["User-Agent", ""]], "user-agent", "a"],
  [[["X-A", "1"], ["x-a", "2"], ["X-A", "3"]], "x-a", "1"],
  // One line holding a list is read whole.
  [[["User-Agent", "a, b"]], "user-agent", "a, b"],
  [[["X-A", "a, b"], ["X-B", "1"], ["X-B", "2"]], "x-a", "a, b"],
  // Joined by nginx too.
  [
    [["X-Forwarded-For", "1"], ["X-Forwarded-For", "2"]],
    "x-forwarded-for",
    "1, 2",
  ],
  [[["Cookie", "a=1"], ["Cookie", "b=2"]], "cookie", "a=1, b=2"],
  [[["X-A", "1"]], "x-b", null],
];

Deno.test("firstLine() reads a field sent on several lines by its first, as nginx 1.22 does, from the fields and from a copy", async (t) => {
  for (const [lines, name, want] of ROWS) {
    await t.step(`${name}: ${JSON.stringify(lines)}`, () => {
      const headers = new Headers(lines);
      // As the handler reads every request: one walk, then the lines.
      const read = readFields(headers);
      strictEqual(
        read.repeated,
        new Set(lines.map(([n]) => n.toLowerCase())).size !== lines.length,
      );
      strictEqual(firstLine(headers, name, headers.get(name)), want);
      const copy = copyFields(headers);
      strictEqual(firstLine(copy, name, copy.get(name)), want);
      // The walk's value, as $http_NAME reads it from the flat list.
      const at = read.fields.indexOf(name);
      strictEqual(
        firstLine(headers, name, at < 0 ? null : read.fields[at + 1]!),
        want,
      );
    });
  }
});

Deno.test("readFields() picks Range and Referer by their first lines", () => {
  const read = readFields(
    new Headers([["Range", ""], ["Referer", "http://a/"], [
      "Range",
      "bytes=0-1",
    ], [
      "Referer",
      "http://b/",
    ]]),
  );
  deepStrictEqual([read.range, read.referrer], ["", "http://a/"]);
});

Deno.test("hasRepeatedLines() and keepFirstLines() see no repeat in a request without one", () => {
  const headers = new Headers([["A", "1, 2"], ["B", ""]]);
  const flat: string[] = [];
  headers.forEach((value, name) => flat.push(name, value));
  strictEqual(hasRepeatedLines(headers, flat.length), false);
  deepStrictEqual([...keepFirstLines(headers)], []);
});

Deno.test("derivedRequest() keeps every method a client may send, the ones new Request forbids too", () => {
  // The Fetch standard's forbidden methods in any letter case, and methods
  // it normalises or leaves alone: each is the derived request's method as
  // sent (a throw here was a 500 and a stack in the log).
  const methods = [
    "TRACK",
    "TRACE",
    "CONNECT",
    "track",
    "Trace",
    "connect",
    "GET",
    "HEAD",
    "POST",
    "PROPFIND",
    "TRACKS",
  ];
  const headers = new Headers([["Range", "bytes=0-1"], ["Range", "bytes=2-3"]]);
  keepFirstLines(headers);
  const got = methods.map((method) => {
    const req = derivedRequest("http://h/p?a", { method, headers });
    return [
      req.method,
      req.url,
      firstLine(req.headers, "range", req.headers.get("range")),
      req.body,
    ];
  });
  deepStrictEqual(
    got,
    methods.map((m) => [m, "http://h/p?a", "bytes=0-1", null]),
  );
});
