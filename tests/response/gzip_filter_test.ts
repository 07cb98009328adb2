import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import {
  gzipFilter,
  type GzipFilterConf,
  gzipTypeMatches,
  markGzipVary,
  NGINX_GZIP_OK,
} from "../../src/response/mod.ts";

const CONF: GzipFilterConf = {
  gzip: {
    enabled: true,
    level: 1,
    minLength: 20,
    types: new Set(["text/html", "application/json"]),
  },
  gzipOk: NGINX_GZIP_OK,
  gzipVary: true,
};

const BODY = JSON.stringify({ rows: Array.from({ length: 50 }, (_, i) => i) });

function run(
  init: {
    status?: number;
    headers?: Record<string, string>;
    body?: string | null;
  },
  options: { head?: boolean; ae?: string; conf?: GzipFilterConf } = {},
): Response {
  const body = init.body === undefined ? BODY : init.body;
  const response = new Response(body, {
    status: init.status ?? 200,
    headers: {
      "content-type": "application/json",
      ...(body === null ? {} : { "content-length": String(body.length) }),
      ...init.headers,
    },
  });
  const headers = new Headers({ "accept-encoding": options.ae ?? "gzip" });
  return gzipFilter(response, {
    conf: options.conf ?? CONF,
    request: { headers, protocol: "HTTP/1.1" },
    head: options.head ?? false,
  });
}

const fields = (r: Response) => [...r.headers].map(([n, v]) => `${n}: ${v}`);

Deno.test("gzipTypeMatches() tests nginx's content_type_len", async (t) => {
  const types = new Set(["text/html", "application/json"]);
  const cases: [string | null, boolean][] = [
    ["application/json", true],
    ["Application/JSON", true],
    ["application/json; charset=utf-8", true],
    ["application/json;charset=utf-8", true],
    ["application/json; CHARSET=utf-8", true],
    ["application/json; v=1", false], // the whole value is tested
    ["application/json; v=1; charset=utf-8", false], // up to the charset's `;`
    ["application/json;", false],
    ["text/plain", false],
    ["", false],
    [null, false],
  ];
  for (const [type, want] of cases) {
    await t.step(
      String(type),
      () => strictEqual(gzipTypeMatches(type, types), want),
    );
  }
  strictEqual(gzipTypeMatches(null, new Set(["*"])), true);
});

Deno.test("gzipFilter() changes the head as nginx's gzip header filter", async (t) => {
  await t.step("compressed: encoding, no length, weak tag, Vary", async () => {
    const out = run({ headers: { etag: '"abc"', "accept-ranges": "bytes" } });
    deepStrictEqual(fields(out).sort(), [
      "content-encoding: gzip",
      "content-type: application/json",
      'etag: W/"abc"',
      "vary: Accept-Encoding",
    ]);
    strictEqual(
      gunzipSync(new Uint8Array(await out.arrayBuffer())).toString(),
      BODY,
    );
  });
  const etags: [string, string | null][] = [
    ['W/"abc"', 'W/"abc"'],
    ["abc", null], // unquoted: dropped
    ["W/", null],
  ];
  for (const [etag, want] of etags) {
    await t.step(`ETag ${etag}`, async () => {
      const out = run({ headers: { etag } });
      strictEqual(out.headers.get("etag"), want);
      await out.body?.cancel();
    });
  }
  await t.step("a client without gzip: Vary only", () => {
    const out = run({}, { ae: "br" });
    strictEqual(out.headers.get("vary"), "Accept-Encoding");
    strictEqual(out.headers.get("content-encoding"), null);
  });
  await t.step("gzip_static's Vary is not repeated", () => {
    const response = new Response(BODY, {
      headers: { "content-type": "application/json", vary: "Accept-Encoding" },
    });
    markGzipVary(response);
    const out = gzipFilter(response, {
      conf: CONF,
      request: { headers: new Headers(), protocol: "HTTP/1.1" },
      head: false,
    });
    strictEqual(out.headers.get("vary"), "Accept-Encoding");
  });
  await t.step("HEAD: the head changes, no body", async () => {
    // A HEAD answer has no body (the static module and nginx pages give none).
    const out = run({ body: null }, { head: true });
    strictEqual(out.headers.get("content-encoding"), "gzip");
    strictEqual(out.headers.get("content-length"), null);
    strictEqual((await out.arrayBuffer()).byteLength, 0);
  });
  const untouched: [string, Parameters<typeof run>[0]][] = [
    ["a 206", { status: 206 }],
    ["a 500", { status: 500 }],
    ["a 304", { status: 304, body: null }],
    ["already encoded", { headers: { "content-encoding": "br" } }],
    ["under gzip_min_length", { body: "{}" }],
    ["a type not listed", { headers: { "content-type": "image/png" } }],
  ];
  for (const [what, init] of untouched) {
    await t.step(`untouched: ${what}`, async () => {
      const out = run(init);
      strictEqual(
        out.headers.get("content-encoding"),
        init.headers?.["content-encoding"] ?? null,
      );
      strictEqual(out.headers.get("vary"), null);
      await out.body?.cancel();
    });
  }
  await t.step("gzip off: the same response", () => {
    const response = new Response(BODY);
    const out = gzipFilter(response, {
      conf: { ...CONF, gzip: { ...CONF.gzip, enabled: false } },
      request: {
        headers: new Headers({ "accept-encoding": "gzip" }),
        protocol: "HTTP/1.1",
      },
      head: false,
    });
    strictEqual(out, response);
  });
  await t.step("a 403 and a 404 are compressed", async () => {
    for (const status of [403, 404]) {
      const out = run({ status });
      strictEqual(out.headers.get("content-encoding"), "gzip");
      await out.body?.cancel();
    }
  });
});
