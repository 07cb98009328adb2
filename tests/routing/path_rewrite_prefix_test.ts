/**
 * routeRequest() with another prefix than /api/ and with the prefix kept,
 * as nginx routes `location /<prefix>/ { proxy_pass http://h/; }` and
 * `proxy_pass http://h;` (the forwarded targets were observed on nginx 1.22
 * with `curl --path-as-is`).
 */
import { deepStrictEqual } from "node:assert/strict";
import { type Route, routeRequest } from "../../src/routing/path_rewrite.ts";

const proxy = (upstreamPath: string): Route => ({
  kind: "proxy",
  upstreamPath,
});

const CASES: [string, { prefix?: string; keepPrefix?: boolean }, Route][] = [
  ["/backend/loginms?a=1", { prefix: "backend" }, proxy("/loginms?a=1")],
  ["/backend", { prefix: "backend" }, {
    kind: "redirect",
    location: "/backend/",
  }],
  ["/api/loginms", { prefix: "backend" }, {
    kind: "static",
    segments: ["api", "loginms"],
    directory: false,
    query: "",
  }],
  [
    "/api/Home31/UpDateTitle?a=%20",
    { keepPrefix: true },
    proxy("/api/Home31/UpDateTitle?a=%20"),
  ],
  ["/api/a/../c//d%2Fe", { keepPrefix: true }, proxy("/api/a/../c//d%2Fe")],
  ["/x/../api/y", { keepPrefix: true }, proxy("/x/../api/y")],
  ["/api/./z", { keepPrefix: true }, proxy("/api/./z")],
  ["/api//x", { keepPrefix: true }, proxy("/api//x")],
  ["/api/", { keepPrefix: true }, proxy("/api/")],
  ["/api", { keepPrefix: true }, { kind: "redirect", location: "/api/" }],
  ["/api/../..", { keepPrefix: true }, {
    kind: "invalid",
    reason: "path climbs above the root",
  }],
  ["/b/x", { prefix: "b", keepPrefix: true }, proxy("/b/x")],
];

for (const [target, options, expected] of CASES) {
  Deno.test(`routeRequest() with ${JSON.stringify(options)} routes ${target}`, () => {
    deepStrictEqual(
      routeRequest(target, { caseless: false, ...options }),
      expected,
    );
  });
}

Deno.test("routeRequest() keeps the client's letter case of a kept prefix (nginx for Windows)", () => {
  deepStrictEqual(
    routeRequest("/API/q", { caseless: true, keepPrefix: true }),
    proxy("/API/q"),
  );
});
