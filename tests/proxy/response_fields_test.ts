import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  locationResponseFields,
  rewriteRedirectValue,
} from "../../src/proxy/mod.ts";
import { compileRegex } from "../../src/engine/mod.ts";
import { locationConf, value } from "./_location.ts";

const vars = () => ({ captures: [] as readonly string[] }) as never;

Deno.test("rewriteRedirectValue() applies proxy_redirect pairs as ngx_http_proxy_rewrite_redirect", () => {
  const text = (from: string, to: string) => ({
    kind: "text" as const,
    from: value(from),
    to: value(to),
  });
  const regex = (source: string, to: string, caseless = false) => ({
    kind: "regex" as const,
    regex: compileRegex(source, caseless),
    to: value(to),
  });
  const cases: [
    string,
    Parameters<typeof rewriteRedirectValue>[2],
    string,
    number,
    string | null,
  ][] = [
    [
      "default: the proxy_pass text",
      [text("http://backend/", "/api/")],
      "http://backend/login?a=1",
      0,
      "/api/login?a=1",
    ],
    [
      "another origin is left",
      [text("http://backend/", "/api/")],
      "http://127.0.0.1:8080/login",
      0,
      null,
    ],
    [
      "without the slash it does not match",
      [text("http://backend/", "/api/")],
      "http://backend",
      0,
      null,
    ],
    [
      "case matters",
      [text("http://backend/", "/api/")],
      "HTTP://BACKEND/x",
      0,
      null,
    ],
    [
      "the first matching pair wins",
      [text("http://a/", "/one/"), text("http://a/b", "/two/")],
      "http://a/b",
      0,
      "/one/b",
    ],
    [
      "a regex replaces the whole URL, with captures",
      [regex("^http://[^/]+/(.*)$", "/app/$1")],
      "http://x:9/p?q",
      0,
      "/app/p?q",
    ],
    [
      "a caseless regex",
      [regex("^http://BACKEND/", "/", true)],
      "http://backend/z",
      0,
      "/",
    ],
    [
      "an unanchored regex still replaces everything",
      [regex("login", "/sign-in")],
      "http://h/login?next=1",
      0,
      "/sign-in",
    ],
    [
      "Refresh: from after url=",
      [text("http://backend/", "/api/")],
      "5; url=http://backend/x",
      7,
      "5; url=/api/x",
    ],
  ];
  for (const [what, pairs, input, prefix, expected] of cases) {
    strictEqual(
      rewriteRedirectValue(input, prefix, pairs, vars()),
      expected,
      what,
    );
  }
});

Deno.test("locationResponseFields() hides nginx's defaults and proxy_hide_header, passes proxy_pass_header", () => {
  const conf = locationConf({
    name: "/api/",
    pass: "http://backend/",
    hide: ["x-powered-by"],
    passHeader: ["server"],
  });
  const out = locationResponseFields([
    ["Server", "up"],
    ["Date", "Sat, 21 Nov 2026 07:47:58 GMT"],
    ["X-Powered-By", "PHP"],
    ["X-Accel-Redirect", "/x"],
    ["X-Pad", "avoid browser bug"],
    ["Connection", "close, X-Kept"],
    ["X-Kept", "1"],
    ["Keep-Alive", "timeout=5"],
    ["Set-Cookie", "a=1"],
    ["Set-Cookie", "b=2"],
    ["Content-Length", "2"],
  ], { conf, vars: vars(), origin: "http://h:8081", contentLength: 2 });
  deepStrictEqual(out, [
    ["server", "up"],
    ["x-kept", "1"],
    ["set-cookie", "a=1"],
    ["set-cookie", "b=2"],
    ["content-length", "2"],
  ]);
});

Deno.test("locationResponseFields() makes a rewritten Location absolute, leaves others and Refresh as they are", () => {
  const conf = locationConf({ name: "/api/", pass: "http://backend/" });
  const run = (fields: [string, string][]) =>
    locationResponseFields(fields, {
      conf,
      vars: vars(),
      origin: "http://station:8081",
      contentLength: 0,
    }).filter(([n]) => n !== "content-length");
  deepStrictEqual(run([["Location", "http://backend/login"]]), [[
    "location",
    "http://station:8081/api/login",
  ]]);
  deepStrictEqual(run([["Location", "http://127.0.0.1:8080/login"]]), [[
    "location",
    "http://127.0.0.1:8080/login",
  ]]);
  deepStrictEqual(run([["Location", "/relative"]]), [[
    "location",
    "/relative",
  ]]);
  deepStrictEqual(run([["Refresh", "3; URL=http://backend/x"]]), [[
    "refresh",
    "3; URL=/api/x",
  ]]);
  const off = locationConf({
    name: "/api/",
    pass: "http://backend/",
    redirect: [],
  });
  deepStrictEqual(
    locationResponseFields([["Location", "http://backend/login"]], {
      conf: off,
      vars: vars(),
      origin: "http://station:8081",
      contentLength: null,
    }),
    [["location", "http://backend/login"]],
  );
});

Deno.test("locationResponseFields() sends the framed length as the only Content-Length", () => {
  const conf = locationConf({ name: "/api/", pass: "http://backend/" });
  const upstream: [string, string][] = [
    ["Content-Length", "007"],
    ["X-A", "1"],
    ["content-length", "7"],
  ];
  const options = { conf, vars: vars(), origin: "http://h:8081" };
  deepStrictEqual(
    locationResponseFields(upstream, { ...options, contentLength: 7 }),
    [["x-a", "1"], ["content-length", "7"]],
  );
  // No framed length (a HEAD answer, a 304): the upstream's first length.
  deepStrictEqual(
    locationResponseFields(upstream, { ...options, contentLength: null }),
    [["x-a", "1"], ["content-length", "007"]],
  );
});

Deno.test("locationResponseFields() drops the upstream's Content-Length beside any Transfer-Encoding (RFC 9112 §6.3)", async (t) => {
  const conf = locationConf({ name: "/api/", pass: "http://backend/" });
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
      const out = locationResponseFields(fields, {
        conf,
        vars: vars(),
        origin: "http://h:8081",
        contentLength: null,
      });
      strictEqual(out.some(([n]) => n === "content-length"), kept);
      strictEqual(out.some(([n]) => n === "transfer-encoding"), false);
    });
  }
});
