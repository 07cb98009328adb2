import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  type DecodedTarget,
  decodeTarget,
  requestTarget,
} from "../../src/routing/mod.ts";
import { rawUpstreamUri } from "../../src/proxy/mod.ts";

/** Where a target goes: `/api/`'s raw URI, a static `$uri`, or invalid. */
type Route =
  | { kind: "proxy"; upstreamPath: string }
  | { kind: "redirect"; location: string }
  | { kind: "static"; segments: string[]; directory: boolean; query: string }
  | { kind: "invalid"; reason: string };

const proxy = (upstreamPath: string): Route => ({
  kind: "proxy",
  upstreamPath,
});
const stat = (segments: string[], directory = false, query = ""): Route => ({
  kind: "static",
  segments,
  directory,
  query,
});

const CASES: { target: string; expected: Route; caseless?: boolean }[] = [
  { target: "/api/loginms", expected: proxy("/loginms") },
  { target: "/api/Home31/UpDateTitle", expected: proxy("/Home31/UpDateTitle") },
  { target: "/api/loginms?a=1&b=%20", expected: proxy("/loginms?a=1&b=%20") },
  { target: "/api/x?", expected: proxy("/x?") },
  // An encoded separator makes new segments: routed and sent as nginx does.
  { target: "/api/a%2Fb/C%2fd", expected: proxy("/a/b/C/d") },
  { target: "/api/a%2fb%20c/%ff?q=%2f", expected: proxy("/a/b%20c/%FF?q=%2f") },
  { target: "/api/..%2fetc/passwd", expected: stat(["etc", "passwd"]) },
  { target: "/api/x/%2e%2e%2f..%2findex.html", expected: stat(["index.html"]) },
  { target: "/api/x/%2e%2e%2fy", expected: proxy("/y") },
  { target: "/api/a%2f..%2f..%2fb", expected: stat(["b"]) },
  { target: "/api/%5c..%5cindex.html", expected: stat(["index.html"]) },
  { target: "/api%2fx", expected: proxy("/x") },
  { target: "/foo%2f..%2fapi/z/", expected: proxy("/z/") },
  {
    target: "/foo%2f..%2fapi",
    expected: { kind: "redirect", location: "/api/" },
  },
  { target: "/a%2fb%20c/?v=1", expected: stat(["a", "b c"], true, "?v=1") },
  { target: "/app/?x=1", expected: stat(["app"], true, "?x=1") },
  { target: "/api/%7Euser/%E4%B8%AD", expected: proxy("/%7Euser/%E4%B8%AD") },
  { target: "/api/", expected: proxy("/") },
  { target: "/api/?q=1", expected: proxy("/?q=1") },
  { target: "/api/dir/", expected: proxy("/dir/") },
  { target: "/api/x/./y", expected: proxy("/x/y") },
  { target: "/api/x/../loginms", expected: proxy("/loginms") },
  { target: "/api/x/%2e%2E/loginms", expected: proxy("/loginms") },
  { target: "//api//loginms", expected: proxy("/loginms") },
  { target: "/api/x/.", expected: proxy("/x/") },
  { target: "/api/x#frag", expected: proxy("/x") },
  { target: "/%61pi/x", expected: proxy("/x") },
  { target: "/api", expected: { kind: "redirect", location: "/api/" } },
  { target: "/api?x=1", expected: { kind: "redirect", location: "/api/?x=1" } },
  { target: "/API/x", expected: stat(["API", "x"]), caseless: false },
  { target: "/API/x", expected: proxy("/x"), caseless: true },
  { target: "/apix/loginms", expected: stat(["apix", "loginms"]) },
  { target: "/foo/api/x", expected: stat(["foo", "api", "x"]) },
  { target: "/api/../index.html", expected: stat(["index.html"]) },
  { target: "/api/%2e%2e/index.html", expected: stat(["index.html"]) },
  { target: "/api\\..\\index.html", expected: stat(["index.html"]) },
  { target: "/", expected: stat([], true) },
  { target: "/app/", expected: stat(["app"], true) },
  { target: "/a%20b.js", expected: stat(["a b.js"]) },
  { target: "/%252e%252e/x", expected: stat(["%2e%2e", "x"]) },
  {
    target: "/..",
    expected: { kind: "invalid", reason: "path climbs above the root" },
  },
  {
    target: "/%2e%2e/%2e%2e/etc/passwd",
    expected: { kind: "invalid", reason: "path climbs above the root" },
  },
  {
    target: "/x%2f..%2f..%2fy",
    expected: { kind: "invalid", reason: "path climbs above the root" },
  },
  {
    target: "/api/x%00y",
    expected: { kind: "invalid", reason: "path holds a NUL byte" },
  },
  {
    target: "/x%00y",
    expected: { kind: "invalid", reason: "path holds a NUL byte" },
  },
  {
    target: "/api/%zz",
    expected: { kind: "invalid", reason: "malformed percent-encoding" },
  },
  // Bytes that are not UTF-8 are bytes of the path as any other (nginx
  // reads no path as UTF-8): each held as U+DC80-U+DCFF.
  { target: "/x%2f%ff", expected: stat(["x", "\udcff"]) },
  { target: "/x/a%FFb", expected: stat(["x", "a\udcffb"]) },
  { target: "/x/%80", expected: stat(["x", "\udc80"]) },
  { target: "/x/%E4%B8", expected: stat(["x", "\udce4\udcb8"]) },
  { target: "/x/%C0%AF", expected: stat(["x", "\udcc0\udcaf"]) },
  { target: "/x/%FF%C3%A9/", expected: stat(["x", "\udcffé"], true) },
  {
    target: "/x/%zz",
    expected: { kind: "invalid", reason: "malformed percent-encoding" },
  },
];

/** The built-in `/api/` location's raw URI (`station_proxy_raw_uri`, `proxy_pass …/`). */
function raw(target: string, caseless = false): string | null {
  return rawUpstreamUri({
    proxyUri: "/",
    locationName: "/api/",
    requestUri: target,
    caseless,
  });
}

Deno.test("decodeTarget() and the /api/ raw URI route, normalise and keep bytes", async (t) => {
  for (const { target, expected, caseless } of CASES) {
    await t.step(`${target}${caseless ? " (caseless)" : ""}`, () => {
      // What /api/ sends upstream, or null where /api/ does not match.
      strictEqual(
        raw(target, caseless),
        expected.kind === "proxy" ? expected.upstreamPath : null,
      );
      const decoded = decodeTarget(target);
      if (expected.kind === "invalid") {
        deepStrictEqual(decoded, expected);
      } else if (expected.kind === "static") {
        const { segments, directory, query } = expected;
        const trailing = directory && segments.length > 0 ? "/" : "";
        deepStrictEqual(
          decoded,
          {
            kind: "uri",
            uri: `/${segments.join("/")}${trailing}`,
            args: query.slice(1),
          } satisfies DecodedTarget,
        );
      }
    });
  }
});

Deno.test("the /api/ raw URI's fast path agrees with full normalisation", () => {
  // "/." in front changes no route (a dot segment is dropped) but always
  // takes the general path, so each pair compares the two code paths.
  const pieces = [
    "api",
    "API",
    "Home31",
    "x",
    ".",
    "..",
    "%2e",
    "%2F",
    "a%20b",
    "",
    "\\",
    ".x",
    "q?a=1/./b",
    "#f",
  ];
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n; // the high bits: the low ones cycle
  };
  let fast = 0;
  for (let i = 0; i < 5000; i++) {
    const parts = [i % 2 === 0 ? "api" : pieces[next(pieces.length)]!];
    const count = 1 + next(4);
    for (let j = 0; j < count; j++) parts.push(pieces[next(pieces.length)]!);
    const target = "/" + parts.join("/");
    for (const caseless of [false, true]) {
      const direct = raw(target, caseless);
      strictEqual(direct, raw(`/.${target}`, caseless), target);
      if (direct !== null && !target.includes("/.")) fast++;
    }
  }
  // Both paths were exercised.
  strictEqual(fast > 500, true, `fast-path cases: ${fast}`);
});

Deno.test("requestTarget() recovers the raw target from Deno.serve's URL", async (t) => {
  const cases: [string, string | null, string][] = [
    ["http://localhost:8081/api/a?b", "localhost:8081", "/api/a?b"],
    [
      "http://localhost:8081//evil.example/x",
      "localhost:8081",
      "//evil.example/x",
    ],
    ["http://other/api/x", "localhost:8081", "/api/x"],
    ["http://u:p@evil/api/x", "localhost:8081", "/api/x"],
    ["http://localhost:41287/api/x", null, "/api/x"],
    ["http://a/b/api/x", "a/b", "/api/x"],
    ["http://localhost:8081/a@b/api/x", "localhost:8081", "/a@b/api/x"],
    ["http://ab/x", "a", "/x"],
    ["http://h?x=1", "z", "/?x=1"],
  ];
  for (const [url, host, expected] of cases) {
    await t.step(`${url} (Host ${host})`, () => {
      strictEqual(requestTarget(url, host), expected);
    });
  }
});

Deno.test("the /api/ raw URI sends only paths that start with one slash", async (t) => {
  // The upstream client writes this path after the method, with its own
  // Host: a path starting with one "/" cannot name another server.
  const hostile = [
    "//evil.example/x",
    "/api//evil.example/x",
    "http://other/api/x",
    "/api/@evil.example/x",
    "/api/\\\\evil.example\\x",
    "/api/..%2f..%2f/x",
    "/api/%2F%2Fevil.example/x",
    "/api/%5c%5cevil.example/x",
    "/api/x%23y%3fz",
    "/api/%0d%0aX-Injected:%20yes",
  ];
  for (const target of hostile) {
    await t.step(target, () => {
      const sent = raw(requestTarget(target, "localhost:8081"));
      if (sent === null) return; // not proxied at all: safe
      const path = sent.split("?")[0]!;
      strictEqual(path.startsWith("/") && !path.startsWith("//"), true, path);
      strictEqual(/[\\#\s]/.test(path), false, path);
    });
  }
});
