import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { checkRequestHead } from "../../src/routing/request_checks.ts";
import { readFields } from "../../src/routing/read_fields.ts";
import {
  absoluteAuthority,
  looksLikeHttp2,
  originTarget,
  requestLine,
} from "../../src/routing/request_line.ts";
import { requestTarget } from "../../src/routing/request_target.ts";
import { UNIQUE_FIELDS } from "../../src/routing/duplicate_fields.ts";

function verdict(
  method: string,
  headers: Record<string, string>,
): string {
  // `new Request` forbids TRACE; the checks read only these two fields.
  const req = { method, headers: new Headers(headers) } as Request;
  const v = checkRequestHead(req, req.headers.get("host"));
  return v.kind === "ok"
    ? `ok ${v.notes.map((n) => n.message).join("|")}`.trim()
    : `${v.status}${v.wholeHead ? " (whole head)" : ""} ${v.event.message}`;
}

Deno.test("checkRequestHead() refuses what nginx refuses, in nginx's order, and says which refusals come once the whole head is read", async (t) => {
  const cases: [string, Record<string, string>, string][] = [
    ["GET", { host: "h" }, "ok"],
    ["POST", { host: "h", "content-length": "5" }, "ok"],
    ["GET", {}, '400 client sent HTTP/1.1 request without "Host" header'],
    ["GET", { host: "" }, "400 client sent invalid host header"],
    ["GET", { host: "a/b" }, "400 client sent invalid host header"],
    ["GET", { host: "a b" }, "400 client sent invalid host header"],
    ["GET", { host: "%zz" }, "ok"],
    ["GET", { host: "[::1]:8081" }, "ok"],
    [
      "POST",
      { host: "h", "content-length": "5, 5" },
      '400 client sent duplicate header line: "Content-Length: 5", previous value: "Content-Length: 5"',
    ],
    [
      "POST",
      { "content-length": "5, 5" },
      '400 client sent duplicate header line: "Content-Length: 5", previous value: "Content-Length: 5"',
    ],
    [
      "POST",
      { host: "h", "content-length": "9223372036854775808" },
      '400 (whole head) client sent invalid "Content-Length" header',
    ],
    [
      "POST",
      { host: "h", "transfer-encoding": "gzip, chunked" },
      '501 (whole head) client sent unknown "Transfer-Encoding": "gzip, chunked"',
    ],
    ["POST", { host: "h", "transfer-encoding": "Chunked" }, "ok"],
    [
      "POST",
      { host: "h", "transfer-encoding": "chunked", "content-length": "3" },
      '400 (whole head) client sent "Content-Length" and "Transfer-Encoding" headers at the same time',
    ],
    ["TRACE", { host: "h" }, "405 (whole head) client sent TRACE method"],
    [
      "GET",
      { host: "h", x_a: "1", "x-b": "2" },
      'ok client sent invalid header line: "x_a: 1"',
    ],
  ];
  for (const [method, headers, expected] of cases) {
    await t.step(`${method} ${JSON.stringify(headers)}`, () => {
      strictEqual(verdict(method, headers), expected);
    });
  }
});

Deno.test("checkRequestHead() refuses every field nginx takes once only on two lines, however Headers joins them", async (t) => {
  // Each shape: the two lines' values, and what the joined value shows
  // (no ", " after an empty line, a date's own ", ").
  const shapes: [string, string][] = [
    ["", "v"],
    ["v", ""],
    ["", ""],
    ["Sun", "06 Nov 1994 08:49:37 GMT"],
    ["a", "b, c"],
    ["a", "a"],
  ];
  for (const name of UNIQUE_FIELDS) {
    for (const [first, second] of shapes) {
      await t.step(`${name}: ${JSON.stringify([first, second])}`, () => {
        const headers = new Headers([["host", "h"], [name, first], [
          name,
          second,
        ]]);
        const req = { method: "GET", headers } as Request;
        const v = checkRequestHead(req, "h");
        strictEqual(
          v.kind === "reject" ? `${v.status} ${v.event.message}` : v.kind,
          `400 client sent duplicate header line: "${name}: ${second}", previous value: "${name}: ${first}"`,
        );
      });
    }
  }
  // Repeated fields nginx joins, a list on one line, no repeat at all.
  const served: [string, string][][] = [
    [["cookie", "a=1"], ["cookie", "b=2"]],
    [["accept", ""], ["accept", "b"]],
    [["if-none-match", '"a", "b"']],
    [["if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT"]],
    [["authorization", 'Digest a="1", b="2"']],
    [],
  ];
  for (const lines of served) {
    await t.step(`served: ${JSON.stringify(lines)}`, () => {
      const headers = new Headers([["host", "h"], ...lines]);
      const req = { method: "GET", headers } as Request;
      strictEqual(checkRequestHead(req, "h").kind, "ok");
    });
  }
});

Deno.test("looksLikeHttp2() tells HTTP/2 from a request without Host", () => {
  deepStrictEqual(
    [
      looksLikeHttp2("http://127.0.0.1:8081/api/x", null, 8081),
      looksLikeHttp2("http://localhost:8081/api/x", null, 8081),
      looksLikeHttp2("http://localhost:8081?x", null, 8081),
      looksLikeHttp2("http://localhost:80812/x", null, 8081),
      looksLikeHttp2("http://localhost/x", null, 80),
      looksLikeHttp2("http://127.0.0.1:8081/api/x", "127.0.0.1:8081", 8081),
    ],
    [true, false, false, true, false, false],
  );
});

Deno.test("requestLine() keeps absolute-form and CONNECT targets as sent", () => {
  const line = (
    url: string,
    host: string | null,
    target: string,
    method = "GET",
  ) =>
    requestLine(
      new Request(url, { method, headers: host === null ? {} : { host } }),
      { host, target, http2: false },
    );
  strictEqual(line("http://h:1/a?b", "h:1", "/a?b"), "GET /a?b HTTP/1.1");
  strictEqual(
    line("http://other:9/a?b", "h:1", "/a?b"),
    "GET http://other:9/a?b HTTP/1.1",
  );
  strictEqual(line("http://localhost:1/a", null, "/a"), "GET /a HTTP/1.1");
  strictEqual(
    requestLine(new Request("http://h/x"), {
      host: null,
      target: "/x",
      http2: true,
    }),
    "PRI * HTTP/2.0",
  );
});

Deno.test("absoluteAuthority() is null exactly when the URL is scheme, Host and target joined", async (t) => {
  // [url, Host, target, scheme, authority]
  const cases: [
    string,
    string | null,
    string,
    "http" | "https",
    string | null,
  ][] = [
    ["http://h:1/a?b", "h:1", "/a?b", "http", null],
    ["https://h:1/a", "h:1", "/a", "https", null],
    // The Host's bytes as Deno.serve shows them in the URL (UTF-8).
    ["http://é:1/a", "\xc3\xa9:1", "/a", "http", null],
    ["http://other:9/a?b", "h:1", "/a?b", "http", "other:9"],
    ["http://other:9?q", "h", "/?q", "http", "other:9"],
    // Same length, one character apart, in each part.
    ["http://h:2/a", "h:1", "/a", "http", "h:2"],
    ["http://h:1/b", "h:1", "/a", "http", "h:1"],
    ["https://h:1/a", "h:1", "/a", "http", "h:1"],
    // A longer or shorter URL around the same parts.
    ["http://h:1/a/", "h:1", "/a", "http", "h:1"],
    ["http://h:1/a", "h:1", "/a/", "http", "h:1"],
    ["http://h/a", null, "/a", "http", null],
    ["http://h/a", "", "/a", "http", null],
  ];
  for (const [url, host, target, scheme, want] of cases) {
    await t.step(`${url} (Host ${host}, ${scheme})`, () => {
      strictEqual(absoluteAuthority(url, host, target, scheme), want);
    });
  }
});

Deno.test("readFields() picks each field the handler reads as Headers.get reads it, and keeps every field flat", async (t) => {
  const picked = [
    ["host", "host"],
    ["referrer", "referer"],
    ["contentLength", "content-length"],
    ["transferEncoding", "transfer-encoding"],
    ["expect", "expect"],
    ["ifNoneMatch", "if-none-match"],
    ["ifModifiedSince", "if-modified-since"],
    ["range", "range"],
    ["ifRange", "if-range"],
  ] as const;
  const cases: [string, [string, string][]][] = [
    ["none of them", [["accept", "*/*"]]],
    ["every one", picked.map(([, name], i) => [name, `v${i}`])],
    ["names in any case", [["HOST", "h"], ["Referer", "r"], ["RANGE", "x"]]],
    ["repeated ones joined", [["if-none-match", '"a"'], [
      "if-none-match",
      '"b"',
    ], [
      "x-y",
      "1",
    ]]],
    ["no fields", []],
  ];
  for (const [name, fields] of cases) {
    await t.step(name, () => {
      const headers = new Headers(fields);
      const read = readFields(headers);
      for (const [key, field] of picked) {
        strictEqual(read[key], headers.get(field), field);
      }
      const flat: string[] = [];
      headers.forEach((value, name) => flat.push(name, value));
      deepStrictEqual(read.fields, flat);
    });
  }
});

Deno.test("checkRequestHead() gives nginx's verdict from fields read already as from the request", async (t) => {
  /** [method, fields, the status refused with (0: accepted), info lines] */
  const heads: [string, Record<string, string>, number, number][] = [
    ["GET", { host: "h" }, 0, 0],
    ["GET", {}, 400, 0],
    ["POST", { host: "h", "content-length": "5, 5" }, 400, 0],
    ["POST", { host: "h", "transfer-encoding": "gzip, chunked" }, 501, 0],
    [
      "POST",
      {
        host: "h",
        "transfer-encoding": "chunked",
        "content-length": "3",
      },
      400,
      0,
    ],
    ["GET", { host: "h", x_a: "1", "x-b": "x".repeat(9000) }, 494, 1],
  ];
  for (const [method, headers, status, notes] of heads) {
    await t.step(`${method} ${JSON.stringify(headers).slice(0, 60)}`, () => {
      const req = { method, headers: new Headers(headers) } as Request;
      const host = req.headers.get("host");
      const options = { notes: true, line: `${method} / HTTP/1.1` };
      const given = checkRequestHead(req, host, {
        ...options,
        read: readFields(req.headers),
      });
      deepStrictEqual(
        [given.kind === "reject" ? given.status : 0, given.notes.length],
        [status, notes],
      );
      deepStrictEqual(given, checkRequestHead(req, host, options));
    });
  }
});

Deno.test("originTarget() answers only an origin-form URL, and then as requestTarget() and absoluteAuthority() do", async (t) => {
  // [url, Host, scheme, the target it answers or null]
  const cases: [string, string, "http" | "https", string | null][] = [
    ["http://h:1/a?b", "h:1", "http", "/a?b"],
    ["https://h:1/", "h:1", "https", "/"],
    ["https://[::1]:8443/x", "[::1]:8443", "https", "/x"],
    ["https://h/a/b//c", "h", "https", "/a/b//c"],
    // Absolute-form, another authority or scheme: the two decide.
    ["http://other:9/a", "h:1", "http", null],
    ["http://h:10/a", "h:1", "http", null],
    ["http://h:1?q", "h:1", "http", null],
    ["http://h:1", "h:1", "http", null],
    ["https://h:1/a", "h:1", "http", null],
    ["http://h:1/a", "h:1", "https", null],
    ["http://h/a", "", "http", null],
    // A Host the checks refuse later reads the same either way.
    ["http://a/b/x", "a/b", "http", "/x"],
    ["http://a://b/x", "a://b", "http", "/x"],
  ];
  for (const [url, host, scheme, want] of cases) {
    await t.step(`${url} (Host ${host}, ${scheme})`, () => {
      const got = originTarget(url, host, scheme);
      strictEqual(got, want);
      if (got === null) return;
      strictEqual(requestTarget(url, host), got);
      strictEqual(absoluteAuthority(url, host, got, scheme), null);
    });
  }
});
