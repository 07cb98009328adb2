/**
 * makeResponse(): the one constructor of the gateway's responses drops the
 * body of a 204, 205 or 304 (which `new Response` refuses with a body) and
 * the fields that described it, and is the only place in `src/` that calls
 * `new Response`.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { isNullBodyStatus, makeResponse } from "../../src/response/mod.ts";

const FIELDS = {
  "content-type": "text/html",
  "content-length": "9",
  "last-modified": "Thu, 01 Jan 2026 00:00:00 GMT",
  "x-kept": "1",
};

Deno.test("makeResponse() sends 204, 205 and 304 without a body, whatever body it is given", async (t) => {
  const bodies: [string, () => BodyInit | null][] = [
    ["null", () => null],
    ["empty text", () => ""],
    ["text", () => "the page\n"],
    ["bytes", () => new TextEncoder().encode("the page\n")],
    ["stream", () => ReadableStream.from([new TextEncoder().encode("x")])],
  ];
  // status, the fields kept (ngx_http_header_filter: a 204 loses its type
  // and Last-Modified too)
  const cases: [number, string[]][] = [
    [204, ["x-kept"]],
    [205, ["content-type", "last-modified", "x-kept"]],
    [304, ["content-type", "last-modified", "x-kept"]],
  ];
  for (const [status, kept] of cases) {
    for (const [name, body] of bodies) {
      await t.step(`${status}, ${name}`, () => {
        const response = makeResponse(body(), { status, headers: FIELDS });
        deepStrictEqual(
          [response.status, response.body, [...response.headers.keys()]],
          [status, null, kept],
        );
      });
    }
  }
});

Deno.test("makeResponse() cancels a stream body it drops", async () => {
  let cancelled = false;
  const body = new ReadableStream({
    cancel() {
      cancelled = true;
    },
  });
  makeResponse(body, { status: 304 });
  await Promise.resolve();
  strictEqual(cancelled, true);
});

Deno.test("makeResponse() leaves any other status as new Response() makes it", async () => {
  for (const status of [200, 201, 206, 404, 418, 500]) {
    const response = makeResponse("abc", { status, headers: FIELDS });
    deepStrictEqual(
      [
        response.status,
        await response.text(),
        response.headers.get("content-length"),
      ],
      [status, "abc", "9"],
    );
  }
  deepStrictEqual(
    [204, 205, 304, 200, 206, 404].map(isNullBodyStatus),
    [true, true, true, false, false, false],
  );
});

Deno.test("no module in src/ calls new Response() but make_response.ts", async () => {
  const found: string[] = [];
  const root = new URL("../../src/", import.meta.url);
  // Bounded: the source tree's folders, each read once.
  const folders = [root];
  for (let i = 0; i < 1000 && folders.length > 0; i++) {
    const folder = folders.pop()!;
    for await (const entry of Deno.readDir(folder)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), folder);
      if (entry.isDirectory) folders.push(url);
      else if (
        entry.name.endsWith(".ts") && entry.name !== "make_response.ts"
      ) {
        const lines = (await Deno.readTextFile(url)).split("\n");
        lines.forEach((line, n) => {
          const code = line.trimStart();
          // JSDoc examples and comments may show it.
          if (code.startsWith("*") || code.startsWith("//")) return;
          if (/\bnew Response\(/.test(line)) {
            found.push(`${url.pathname.slice(root.pathname.length)}:${n + 1}`);
          }
        });
      }
    }
  }
  deepStrictEqual(found, []);
});
