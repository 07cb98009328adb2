/** Responses made from a status, a field list and a body. */
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  isStreamedResponse,
  streamedResponse,
} from "../../src/response/response_body.ts";

const FIELDS: [string, string][] = [
  ["Content-Type", "application/json"],
  ["set-cookie", "a=1"],
  ["Set-Cookie", "b=2"],
  ["x-a", "1"],
  ["X-A", "2"],
];

Deno.test("streamedResponse() keeps the status, every field in order and the body, whatever the body", async (t) => {
  const bytes = () => new TextEncoder().encode('{"ok":true}');
  const cases: {
    name: string;
    status: number;
    body: () => BodyInit | null;
    streamed: boolean;
  }[] = [
    {
      name: "200, bytes (made bare)",
      status: 200,
      body: bytes,
      streamed: false,
    },
    { name: "201, bytes", status: 201, body: bytes, streamed: false },
    {
      name: "200, a stream",
      status: 200,
      body: () => new Blob([bytes()]).stream(),
      streamed: true,
    },
    {
      name: "200, a string",
      status: 200,
      body: () => '{"ok":true}',
      streamed: false,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const res = streamedResponse(c.body(), {
        status: c.status,
        headers: FIELDS,
      });
      strictEqual(res.status, c.status);
      strictEqual(isStreamedResponse(res), c.streamed);
      deepStrictEqual(res.headers.getSetCookie(), ["a=1", "b=2"]);
      deepStrictEqual([...res.headers], [
        ["content-type", "application/json"],
        ["set-cookie", "a=1"],
        ["set-cookie", "b=2"],
        ["x-a", "1, 2"],
      ]);
      strictEqual(await res.text(), '{"ok":true}');
    });
  }
});

Deno.test("streamedResponse() refuses a field the runtime refuses, made bare or not", async (t) => {
  for (const status of [200, 502]) {
    for (const field of [["x-bad\n", "1"], ["x-a", "a\r\nb"], ["x-a"]]) {
      await t.step(`${status} ${JSON.stringify(field)}`, () => {
        throws(
          () =>
            streamedResponse(new Uint8Array(2), {
              status,
              headers: [field as [string, string]],
            }),
          TypeError,
        );
      });
    }
  }
});

Deno.test("streamedResponse() through Deno.serve: a bare 200 goes out with its fields", async () => {
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      streamedResponse(new TextEncoder().encode("hello"), {
        status: 200,
        headers: [["content-type", "text/plain"], ["x-a", "1"]],
      }),
  );
  const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
  strictEqual(res.headers.get("content-type"), "text/plain");
  strictEqual(res.headers.get("x-a"), "1");
  strictEqual(res.headers.get("content-length"), "5");
  strictEqual(await res.text(), "hello");
});
