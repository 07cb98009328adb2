/** A cached file's answer made once and cloned per request. */
import {
  deepStrictEqual,
  notStrictEqual,
  strictEqual,
} from "node:assert/strict";
import { StaticCache } from "../../src/static/cache.ts";
import {
  type FieldsShape,
  templatedByShape,
  templatedFileResponse,
} from "../../src/static/answer_template.ts";

const FIELDS: [string, string][] = [
  ["etag", '"1-2"'],
  ["content-type", "text/html"],
  ["content-length", "5"],
];

/** A cache entry for a file of `text`, in a folder removed afterwards. */
function withEntry(
  text: string,
  fn: (cache: StaticCache, path: string) => Promise<void>,
): Promise<void> {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/f.html`;
  Deno.writeTextFileSync(path, text);
  return fn(new StaticCache(), path).finally(() =>
    Deno.removeSync(dir, { recursive: true })
  );
}

function load(cache: StaticCache, path: string) {
  using file = Deno.openSync(path);
  return cache.load(path, file, file.statSync(), "/")!;
}

Deno.test("templatedFileResponse() answers each request with the file's bytes and fields, from one template while they stay the same", async (t) => {
  const cases: {
    name: string;
    second: { status: number; fields: [string, string][] };
    reused: boolean;
  }[] = [
    {
      name: "same fields",
      second: { status: 200, fields: FIELDS },
      reused: true,
    },
    {
      name: "equal fields in a new list",
      second: { status: 200, fields: FIELDS.map(([n, v]) => [n, v]) },
      reused: true,
    },
    {
      name: "a value changed",
      second: {
        status: 200,
        fields: [FIELDS[0]!, ["content-type", "text/plain"], FIELDS[2]!],
      },
      reused: false,
    },
    {
      name: "a field more",
      second: { status: 200, fields: [...FIELDS, ["expires", "x"]] },
      reused: false,
    },
    {
      name: "a field less",
      second: { status: 200, fields: FIELDS.slice(0, 2) },
      reused: false,
    },
    {
      name: "fields reordered",
      second: { status: 200, fields: [FIELDS[1]!, FIELDS[0]!, FIELDS[2]!] },
      reused: false,
    },
    {
      name: "another status",
      second: { status: 203, fields: FIELDS },
      reused: false,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () =>
      withEntry("hello", async (cache, path) => {
        const body = load(cache, path);
        const first = templatedFileResponse(body, 200, [...FIELDS]);
        const template = body.template;
        notStrictEqual(template, null);
        const second = templatedFileResponse(
          body,
          c.second.status,
          c.second.fields,
        );
        strictEqual(body.template === template, c.reused);
        notStrictEqual(first, second);
        for (const [res, want] of [[first, 200], [second, c.second.status]]) {
          strictEqual((res as Response).status, want);
        }
        deepStrictEqual([...second.headers], [...new Headers(c.second.fields)]);
        strictEqual(await first.text(), "hello");
        strictEqual(await second.text(), "hello");
        // The template itself is never sent, nor its shared stream read.
        strictEqual(body.template?.response.bodyUsed ?? false, false);
        strictEqual(body.stream?.locked, false);
      }));
  }
});

Deno.test("templatedFileResponse() gives each request a response of its own: a field set on one is not on the next", async () => {
  await withEntry("hello", async (cache, path) => {
    const body = load(cache, path);
    const first = templatedFileResponse(body, 200, [...FIELDS]);
    first.headers.set("vary", "Accept-Encoding");
    first.headers.delete("etag");
    const second = templatedFileResponse(body, 200, [...FIELDS]);
    strictEqual(second.headers.get("vary"), null);
    strictEqual(second.headers.get("etag"), '"1-2"');
    strictEqual(await first.text(), "hello");
    strictEqual(await second.text(), "hello");
  });
});

Deno.test("templatedFileResponse() keeps no template for a file read while it changed", async () => {
  await withEntry("hello", async (cache, path) => {
    const body = load(cache, path);
    // As `load()` returns it for a file shorter than its stat said.
    const changing = {
      ...body,
      stream: null,
      validators: null,
      template: null,
    };
    const res = templatedFileResponse(changing, 200, [...FIELDS]);
    strictEqual(changing.template, null);
    strictEqual(await res.text(), "hello");
  });
});

Deno.test("templatedFileResponse() through Deno.serve: many requests at once get the same bytes and fields", async () => {
  await withEntry("x".repeat(2048), async (cache, path) => {
    const body = load(cache, path);
    const fields: [string, string][] = [
      ["content-type", "text/html"],
      ["content-length", "2048"],
      ["accept-ranges", "bytes"],
    ];
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => templatedFileResponse(body, 200, [...fields]),
    );
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const got = await Promise.all(
      Array.from({ length: 24 }, async () => {
        const res = await fetch(url);
        return {
          type: res.headers.get("content-type"),
          length: res.headers.get("content-length"),
          ranges: res.headers.get("accept-ranges"),
          text: await res.text(),
        };
      }),
    );
    for (const g of got) {
      deepStrictEqual(g, {
        type: "text/html",
        length: "2048",
        ranges: "bytes",
        text: "x".repeat(2048),
      });
    }
    strictEqual(body.stream?.locked, false);
  });
});

Deno.test("templatedByShape() clones the template only for a 200 made from the same shape", async (t) => {
  const shape: FieldsShape = {
    contentType: "text/html",
    etag: true,
    ranges: true,
    framed: false,
  };
  const cases: {
    name: string;
    made: { status: number; shape: FieldsShape | null } | null;
    asked: FieldsShape;
    reused: boolean;
  }[] = [
    {
      name: "same shape",
      made: { status: 200, shape },
      asked: shape,
      reused: true,
    },
    {
      name: "equal shape in a new object",
      made: { status: 200, shape },
      asked: { ...shape },
      reused: true,
    },
    { name: "no template yet", made: null, asked: shape, reused: false },
    {
      name: "a template made without a shape",
      made: { status: 200, shape: null },
      asked: shape,
      reused: false,
    },
    {
      name: "a template of another status",
      made: { status: 206, shape },
      asked: shape,
      reused: false,
    },
    {
      name: "another type",
      made: { status: 200, shape },
      asked: { ...shape, contentType: "text/plain" },
      reused: false,
    },
    {
      name: "etag off",
      made: { status: 200, shape },
      asked: { ...shape, etag: false },
      reused: false,
    },
    {
      name: "no Accept-Ranges",
      made: { status: 200, shape },
      asked: { ...shape, ranges: false },
      reused: false,
    },
    {
      name: "framed in one piece",
      made: { status: 200, shape },
      asked: { ...shape, framed: true },
      reused: false,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () =>
      withEntry("hello", async (cache, path) => {
        const body = load(cache, path);
        if (c.made !== null) {
          await templatedFileResponse(
            body,
            c.made.status,
            [...FIELDS],
            c.made.shape,
          ).body?.cancel();
        }
        const got = templatedByShape(body, c.asked);
        strictEqual(got !== null, c.reused);
        if (got === null) return;
        strictEqual(got.status, 200);
        deepStrictEqual([...got.headers], [...new Headers(FIELDS)]);
        strictEqual(await got.text(), "hello");
        strictEqual(body.template?.response.bodyUsed, false);
      }));
  }
});

Deno.test("templatedFileResponse() learns the shape of a template made without one when the same fields come with it", async () => {
  await withEntry("hello", async (cache, path) => {
    const body = load(cache, path);
    const shape: FieldsShape = {
      contentType: "text/html",
      etag: true,
      ranges: false,
      framed: false,
    };
    await templatedFileResponse(body, 200, [...FIELDS]).body?.cancel();
    strictEqual(templatedByShape(body, shape), null);
    await templatedFileResponse(body, 200, [...FIELDS], shape).body?.cancel();
    const got = templatedByShape(body, shape);
    strictEqual(await got?.text(), "hello");
  });
});
