import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  clientResponseHeaders,
  rewriteRedirect,
  upstreamRequestHeaders,
} from "../../src/proxy/headers.ts";

function asHeaders(
  ...args: Parameters<typeof upstreamRequestHeaders>
): Headers {
  return new Headers(upstreamRequestHeaders(...args));
}

Deno.test("upstreamRequestHeaders() drops hop-by-hop and Connection-named fields", () => {
  const client = new Headers([
    ["host", "localhost:8081"],
    ["connection", "keep-alive, X-Foo"],
    ["keep-alive", "timeout=5"],
    ["te", "trailers"],
    ["upgrade", "h2c"],
    ["proxy-connection", "keep-alive"],
    ["transfer-encoding", "chunked"],
    ["content-length", "12"],
    ["expect", "100-continue"],
    ["x-foo", "bar"],
    ["x_under_score", "dropped"],
    ["cookie", "a=1"],
    ["authorization", "Basic dTpw"],
    ["x-forwarded-for", "203.0.113.9"],
    ["accept-encoding", "gzip, br"],
  ]);
  const out = new Headers(
    upstreamRequestHeaders(client, { clientAddress: "127.0.0.1" }),
  );
  deepStrictEqual([...out.keys()].sort(), [
    "accept-encoding",
    "authorization",
    "cookie",
    "x-forwarded-for",
  ]);
  strictEqual(out.get("x-forwarded-for"), "203.0.113.9");
});

Deno.test("upstreamRequestHeaders() adds no Accept-Encoding of its own", () => {
  const out = asHeaders(new Headers(), { clientAddress: "::1" });
  strictEqual(out.has("accept-encoding"), false);
});

Deno.test("upstreamRequestHeaders() adds X-Forwarded-* only when asked", () => {
  const client = new Headers({
    host: "localhost:8081",
    "x-forwarded-for": "10.9.9.9",
  });
  const off = asHeaders(client, { clientAddress: "127.0.0.1" });
  strictEqual(off.has("x-forwarded-proto"), false);
  const on = asHeaders(client, {
    clientAddress: "127.0.0.1",
    addForwardedHeaders: true,
  });
  strictEqual(on.get("x-forwarded-for"), "10.9.9.9, 127.0.0.1");
  strictEqual(on.get("x-forwarded-proto"), "http");
  strictEqual(on.get("x-forwarded-host"), "localhost:8081");
});

Deno.test("rewriteRedirect() follows nginx's proxy_redirect default", async (t) => {
  const up = "http://127.0.0.1:8080";
  const pub = "http://localhost:8081/api/";
  const cases: [string, string][] = [
    ["http://127.0.0.1:8080/foo", "http://localhost:8081/api/foo"],
    ["http://127.0.0.1:8080/", "http://localhost:8081/api/"],
    [
      "http://127.0.0.1:8080/foo?a=1&b=%20",
      "http://localhost:8081/api/foo?a=1&b=%20",
    ],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["http://localhost:8080/foo", "http://localhost:8080/foo"],
    ["/foo", "/foo"],
    [
      "5; url=http://127.0.0.1:8080/next",
      "5; url=http://localhost:8081/api/next",
    ],
    ["0;URL=/rel", "0;URL=/rel"],
  ];
  for (const [value, expected] of cases) {
    await t.step(
      value,
      () => strictEqual(rewriteRedirect(value, up, pub), expected),
    );
  }
});

Deno.test("clientResponseHeaders() strips hop-by-hop, hides Server, keeps cookies apart", () => {
  const upstream: [string, string][] = [
    ["connection", "close, x-secret"],
    ["x-secret", "1"],
    ["keep-alive", "timeout=5"],
    ["transfer-encoding", "chunked"],
    ["server", "tiny-upstream/1.0"],
    ["x-accel-redirect", "/internal"],
    ["set-cookie", "sid=abc; Path=/"],
    ["set-cookie", "theme=dark"],
    ["location", "http://127.0.0.1:8080/home"],
    ["x-lower-case", "yes"],
  ];
  const out = new Headers(clientResponseHeaders(upstream, {
    upstreamOrigin: "http://127.0.0.1:8080",
    publicApiBase: "http://localhost:8081/api/",
  }));
  deepStrictEqual(out.getSetCookie(), ["sid=abc; Path=/", "theme=dark"]);
  strictEqual(out.get("location"), "http://localhost:8081/api/home");
  strictEqual(out.get("x-lower-case"), "yes");
  for (
    const gone of [
      "connection",
      "x-secret",
      "keep-alive",
      "transfer-encoding",
      "server",
      "x-accel-redirect",
    ]
  ) {
    strictEqual(out.has(gone), false, gone);
  }
});

Deno.test("clientResponseHeaders() passes the upstream's encoding and length through", () => {
  const upstream: [string, string][] = [
    ["Content-Encoding", "gzip"],
    ["Content-Length", "28"],
  ];
  const out = clientResponseHeaders(upstream, {
    upstreamOrigin: "http://127.0.0.1:8080",
    publicApiBase: "/api/",
  });
  deepStrictEqual(out, [["content-encoding", "gzip"], [
    "content-length",
    "28",
  ]]);
});

Deno.test("clientResponseHeaders() sends the framed length as the only Content-Length", () => {
  const upstream: [string, string][] = [
    ["Content-Length", "007"],
    ["X-A", "1"],
    ["content-length", "7"],
  ];
  const options = {
    upstreamOrigin: "http://127.0.0.1:8080",
    publicApiBase: "/api/",
  };
  deepStrictEqual(
    clientResponseHeaders(upstream, { ...options, contentLength: 7 }),
    [["x-a", "1"], ["content-length", "7"]],
  );
  // No framed length (a HEAD answer, a 304): the upstream's fields as sent.
  deepStrictEqual(
    clientResponseHeaders(upstream, { ...options, contentLength: null }),
    [["content-length", "007"], ["x-a", "1"], ["content-length", "7"]],
  );
});

Deno.test("clientResponseHeaders() drops what any Connection field names", async (t) => {
  const cases: [string, [string, string][]][] = [
    ["named first", [["Connection", "x-foo"], ["Connection", "keep-alive"]]],
    ["named last", [["Connection", "keep-alive"], ["Connection", "x-foo"]]],
    ["two names", [["Connection", "x-bar"], ["Connection", "x-foo"]]],
  ];
  for (const [name, connection] of cases) {
    await t.step(name, () => {
      const out = clientResponseHeaders(
        [...connection, ["X-Foo", "1"], ["X-Keep", "2"]],
        { upstreamOrigin: "http://127.0.0.1:8080", publicApiBase: "/api/" },
      );
      deepStrictEqual(out, [["x-keep", "2"]]);
    });
  }
});

Deno.test("clientResponseHeaders() drops the upstream's Content-Length beside any Transfer-Encoding (RFC 9112 §6.3)", async (t) => {
  const options = {
    upstreamOrigin: "http://127.0.0.1:8080",
    publicApiBase: "/api/",
  };
  // [upstream fields, whether its content-length reaches the client]
  const cases: [[string, string][], boolean][] = [
    [[["Content-Length", "100"], ["Transfer-Encoding", "chunked"]], false],
    [[["Transfer-Encoding", "chunked"], ["Content-Length", "100"]], false],
    [[["content-length", "5"], ["transfer-encoding", "Chunked"]], false],
    [[["Content-Length", "5"], ["Transfer-Encoding", "gzip"]], false],
    [[["Content-Length", "5"], ["Transfer-Encoding", "gzip, chunked"]], false],
    [[["Content-Length", "5"], ["Transfer-Encoding", ""]], false],
    [[["Content-Length", "5"]], true],
  ];
  for (const [fields, kept] of cases) {
    await t.step(JSON.stringify(fields), () => {
      const out = clientResponseHeaders(fields, options);
      strictEqual(out.some(([n]) => n === "content-length"), kept);
      strictEqual(out.some(([n]) => n === "transfer-encoding"), false);
    });
  }
});
