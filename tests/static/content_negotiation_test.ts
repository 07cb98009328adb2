import { strictEqual } from "node:assert/strict";
import {
  acceptsEncoding,
  cacheControlFor,
  DEFAULT_CACHE_POLICY,
  looksLikeAppRoute,
} from "../../src/static/content_negotiation.ts";

Deno.test("acceptsEncoding() honours q=0 and *", async (t) => {
  const cases: [string | null, string, boolean][] = [
    ["gzip, deflate, br, zstd", "br", true],
    ["gzip, deflate, br, zstd", "gzip", true],
    ["gzip", "br", false],
    ["br;q=0, gzip", "br", false],
    ["BR;Q=0.5", "br", true],
    ["*", "br", true],
    ["*;q=0", "gzip", false],
    ["gzip;q=0, *", "gzip", false],
    ["identity", "gzip", false],
    [null, "gzip", false],
  ];
  for (const [header, coding, expected] of cases) {
    await t.step(
      `${header} / ${coding}`,
      () => strictEqual(acceptsEncoding(header, coding), expected),
    );
  }
});

Deno.test("looksLikeAppRoute() tells app routes from missing assets", async (t) => {
  const cases: [string[], string | null, boolean][] = [
    [["orders", "42"], "*/*", true],
    [["settings"], null, true],
    [[], null, true],
    [["assets", "app.js"], "*/*", false],
    [["favicon.ico"], "image/avif,image/webp,*/*", false],
    [
      ["report.v2"],
      "text/html,application/xhtml+xml,application/xml;q=0.9",
      true,
    ],
    [["missing.css"], "text/css,*/*;q=0.1", false],
  ];
  for (const [segments, accept, expected] of cases) {
    await t.step(
      `/${segments.join("/")} (${accept})`,
      () => strictEqual(looksLikeAppRoute(segments, accept), expected),
    );
  }
});

Deno.test("cacheControlFor() revalidates HTML, caches fingerprinted assets long", async (t) => {
  const long = DEFAULT_CACHE_POLICY.fingerprinted;
  const cases: [string, string][] = [
    ["index.html", "no-cache"],
    ["deep/page.htm", "no-cache"],
    ["assets/index-BQ3x9f2a.js", long],
    ["assets/app.3f9a2c1b.css", long],
    ["chunk-5FZ2WJ7K.mjs", long],
    ["main.js", "no-cache"],
    ["jquery-ui.css", "no-cache"],
    ["vendor-abcdefgh.js", "no-cache"],
    ["logo.png", "no-cache"],
  ];
  for (const [name, expected] of cases) {
    await t.step(
      name,
      () => strictEqual(cacheControlFor(name, DEFAULT_CACHE_POLICY), expected),
    );
  }
});
