import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { AddHeader, Expires } from "../../src/engine/mod.ts";
import {
  filterHeaders,
  HEADERS_FILTER_STATUSES,
} from "../../src/response/mod.ts";
import { requestVars, value } from "../_location_conf.ts";

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const VARS = requestVars(
  new Request("http://localhost:8081/app/x.js?v=1", {
    headers: { host: "LocalHost:8081" },
  }),
  { serverPort: 8081 },
);

function add(name: string, text: string, always = false): AddHeader {
  return { name, value: value(text), always };
}

function filtered(
  status: number,
  addHeaders: AddHeader[],
  init: HeadersInit = {},
  expires: Expires = { kind: "off" },
): [string, string][] {
  const headers = new Headers(init);
  filterHeaders(headers, {
    status,
    conf: { addHeaders, expires },
    vars: VARS,
    now: NOW,
  });
  return [...headers];
}

Deno.test("filterHeaders() adds add_header only for nginx's statuses unless always", async (t) => {
  for (let status = 100; status < 600; status++) {
    if (status % 100 > 8 && status !== 416 && status !== 499) continue;
    const safe = [200, 201, 204, 206, 301, 302, 303, 304, 307, 308].includes(
      status,
    );
    await t.step(String(status), () => {
      strictEqual(HEADERS_FILTER_STATUSES.has(status), safe);
      deepStrictEqual(
        filtered(status, [add("X-A", "a"), add("X-B", "b", true)]),
        safe ? [["x-a", "a"], ["x-b", "b"]] : [["x-b", "b"]],
      );
    });
  }
});

Deno.test("filterHeaders() applies expires only for nginx's statuses", () => {
  const oneHour = { kind: "after", seconds: 3600, modified: false } as const;
  deepStrictEqual(filtered(404, [], {}, oneHour), []);
  deepStrictEqual(filtered(301, [], {}, oneHour), [
    ["cache-control", "max-age=3600"],
    ["expires", "Wed, 25 Nov 2026 13:00:00 GMT"],
  ]);
});

Deno.test("filterHeaders() evaluates values, adds nothing for an empty one, and follows nginx's per-name rules", async (t) => {
  const cases: {
    name: string;
    adds: AddHeader[];
    init?: HeadersInit;
    want: [string, string][];
  }[] = [
    {
      name: "variables",
      adds: [add("X-Uri", "$uri?$args"), add("X-Host", "$host")],
      want: [["x-host", "localhost"], ["x-uri", "/app/x.js?v=1"]],
    },
    {
      name: "an empty value adds nothing",
      adds: [add("X-Empty", ""), add("X-Cookie", "$cookie_none")],
      want: [],
    },
    {
      name: "a name given twice is sent twice",
      adds: [add("X-A", "1"), add("X-A", "2")],
      want: [["x-a", "1, 2"]],
    },
    {
      name: "Cache-Control is added after the one there",
      adds: [add("Cache-Control", "public")],
      init: { "cache-control": "max-age=60" },
      want: [["cache-control", "max-age=60, public"]],
    },
    {
      name: "ETag replaces",
      adds: [add("ETag", '"v2"')],
      init: { etag: '"v1"' },
      want: [["etag", '"v2"']],
    },
    {
      name: "an empty ETag removes it",
      adds: [add("ETag", "")],
      init: { etag: '"v1"' },
      want: [],
    },
    {
      name: "an empty Last-Modified removes it",
      adds: [add("Last-Modified", "")],
      init: { "last-modified": "Wed, 25 Nov 2026 12:00:00 GMT" },
      want: [],
    },
    {
      name: "Content-Length is left to the runtime's framing, in any case",
      adds: [
        add("Content-Length", "0"),
        add("content-length", "7"),
        add("CONTENT-LENGTH", "$arg_v"),
      ],
      init: { "content-length": "2" },
      want: [["content-length", "2"]],
    },
    {
      name: "Content-Length is not added where there is none",
      adds: [add("Content-Length", "0")],
      want: [],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      deepStrictEqual(filtered(200, c.adds, c.init), c.want);
    });
  }
});

Deno.test("filterHeaders() sends a control byte escaped, as a Location's, rather than split the head (nginx) or end the process (Deno's writer)", () => {
  const vars = requestVars(
    new Request("http://localhost/a%0D%0ASet-Cookie:%20x=1%01"),
    { serverPort: 80 },
  );
  const headers = new Headers();
  filterHeaders(headers, {
    status: 200,
    conf: {
      addHeaders: [add("X-Uri", "$uri"), add("X-Arg", "ok")],
      expires: { kind: "off" },
    },
    vars,
  });
  deepStrictEqual([...headers], [
    ["x-arg", "ok"],
    ["x-uri", "/a%0D%0ASet-Cookie: x=1%01"],
  ]);
});

Deno.test("filterHeaders() leaves out a field whose name is no token instead of throwing", () => {
  deepStrictEqual(filtered(200, [add("X Bad", "v"), add("X-Ok", "v")]), [[
    "x-ok",
    "v",
  ]]);
});

Deno.test("filterHeaders() sends a UTF-8 $uri as its bytes, as nginx does", () => {
  const vars = requestVars(
    new Request("http://localhost/%E4%B8%AD.html"),
    { serverPort: 80 },
  );
  const headers = new Headers();
  filterHeaders(headers, {
    status: 200,
    conf: { addHeaders: [add("X-Uri", "$uri")], expires: { kind: "off" } },
    vars,
  });
  strictEqual(headers.get("x-uri"), "/\u00e4\u00b8\u00ad.html");
});

Deno.test("filterHeaders() runs expires before add_header and replaces earlier Expires and Cache-Control", () => {
  deepStrictEqual(
    filtered(
      200,
      [add("Cache-Control", "public")],
      { "cache-control": "private, max-age=5", expires: "0" },
      { kind: "epoch" },
    ),
    [["cache-control", "no-cache, public"], [
      "expires",
      "Thu, 01 Jan 1970 00:00:01 GMT",
    ]],
  );
});

Deno.test("filterHeaders() counts expires modified from the response's Last-Modified", () => {
  deepStrictEqual(
    filtered(200, [], { "last-modified": "Wed, 25 Nov 2026 11:00:00 GMT" }, {
      kind: "after",
      seconds: 7200,
      modified: true,
    }),
    [
      ["cache-control", "max-age=3600"],
      ["expires", "Wed, 25 Nov 2026 13:00:00 GMT"],
      ["last-modified", "Wed, 25 Nov 2026 11:00:00 GMT"],
    ],
  );
});
