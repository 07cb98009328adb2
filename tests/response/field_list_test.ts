/**
 * `FieldList` changes a field list as `Headers` changes its own: the
 * static handler's answers are filtered through it before their
 * `Response` is made.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { FieldList } from "../../src/response/mod.ts";

type Op =
  | ["get", string]
  | ["set", string, string]
  | ["append", string, string]
  | ["delete", string];

/** Runs ops on a `Headers` and on a `FieldList`: each result, or the error's type. */
function both(initial: [string, string][], ops: Op[]) {
  const headers = new Headers(initial);
  const list = initial.map(([n, v]) => [n, v] as [string, string]);
  const fields = new FieldList(list);
  const run = (target: Headers | FieldList) =>
    ops.map((op) => {
      try {
        switch (op[0]) {
          case "get":
            return target.get(op[1]);
          case "set":
            return target.set(op[1], op[2]);
          case "append":
            return target.append(op[1], op[2]);
          case "delete":
            return target.delete(op[1]);
        }
      } catch (error) {
        return (error as Error).constructor.name;
      }
    });
  return {
    headers: { results: run(headers), fields: [...headers] },
    list: { results: run(fields), fields: [...new Headers(list)] },
    order: list.map(([n]) => n.toLowerCase()),
  };
}

Deno.test("FieldList changes fields as Headers does", async (t) => {
  const initial: [string, string][] = [
    ["ETag", '"a"'],
    ["Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT"],
    ["x-a", "1"],
    ["X-A", "2"],
    ["content-type", "text/html"],
  ];
  const cases: [string, Op[]][] = [
    ["get joins repeated fields", [["get", "x-a"], ["get", "X-A"], [
      "get",
      "none",
    ]]],
    ["set replaces the first, removes the rest", [["set", "x-a", "3"], [
      "get",
      "x-a",
    ]]],
    ["set adds a new field", [["set", "Cache-Control", "no-cache"]]],
    ["append adds after", [["append", "Cache-Control", "a"], [
      "append",
      "cache-control",
      "b",
    ], ["get", "cache-control"]]],
    ["delete removes every one", [["delete", "X-a"], ["get", "x-a"]]],
    ["values are trimmed", [["append", "x-t", "  v \t"], ["get", "x-t"]]],
    ["a name that is no token throws", [
      ["append", "bad name", "v"],
      ["set", "a:b", "v"],
      ["get", "a b"],
      ["delete", ""],
    ]],
    ["a value with CR, LF, NUL or past Latin-1 throws", [
      ["append", "x", "a\r\nb"],
      ["set", "x", "a\0"],
      ["append", "x", "é✓"],
    ]],
    ["Latin-1 bytes pass", [["append", "x", "\xe9\xff"], ["get", "x"]]],
  ];
  for (const [name, ops] of cases) {
    await t.step(name, () => {
      const { headers, list } = both(initial, ops);
      deepStrictEqual(list.results, headers.results);
      deepStrictEqual(list.fields, headers.fields);
    });
  }
  await t.step("set keeps the field where it was; append goes last", () => {
    const { order } = both(initial, [
      ["set", "etag", '"b"'],
      ["append", "Vary", "Accept-Encoding"],
    ]);
    deepStrictEqual(order, [
      "etag",
      "last-modified",
      "x-a",
      "x-a",
      "content-type",
      "vary",
    ]);
  });
  await t.step("append takes the case of a field already there", () => {
    const list: [string, string][] = [["Vary", "Origin"]];
    new FieldList(list).append("vary", "Accept-Encoding");
    strictEqual(list[1]![0], "Vary");
  });
});
