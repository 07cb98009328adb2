import { deepStrictEqual } from "node:assert/strict";
import { type AccelTarget, accelTarget } from "../../src/proxy/mod.ts";

const uri = (path: string, args = ""): AccelTarget => ({
  kind: "uri",
  uri: path,
  args,
});
/** Refused, `uri` as nginx's line names it. */
const unsafe = (uri: string): AccelTarget => ({ kind: "unsafe", uri });
const NAMED: AccelTarget = { kind: "named", name: "@named" };

Deno.test("accelTarget() reads X-Accel-Redirect as ngx_http_parse_unsafe_uri does", async (t) => {
  // Each value as nginx reads it on Linux, then on Windows, where `\`
  // separates segments too (ngx_path_separator).
  const cases: [string, linux: AccelTarget, windows: AccelTarget][] = [
    ["/files/a.txt", uri("/files/a.txt"), uri("/files/a.txt")],
    [
      "/files/a.txt?x=1&y=%20",
      uri("/files/a.txt", "x=1&y=%20"),
      uri("/files/a.txt", "x=1&y=%20"),
    ],
    ["/files/a%20b%2Ec", uri("/files/a b.c"), uri("/files/a b.c")],
    ["/files/%FF", uri("/files/\udcff"), uri("/files/\udcff")],
    ["/files/caf\xc3\xa9", uri("/files/café"), uri("/files/café")],
    ["/t%3Fx?y=1", uri("/t?x", "y=1"), uri("/t?x", "y=1")],
    ["@named", NAMED, NAMED],
    // `..` segments, with either separator, escaped or not.
    ["/a/..", unsafe("/a/.."), unsafe("/a/..")],
    ["/a/../b?x", unsafe("/a/../b?x"), unsafe("/a/../b?x")],
    ["..", unsafe(".."), unsafe("..")],
    ["../b", unsafe("../b"), unsafe("../b")],
    ["/a/%2E%2E/b?x", unsafe("/a/../b"), unsafe("/a/../b")],
    ["/a/%2e%2e", unsafe("/a/.."), unsafe("/a/..")],
    ["/a\\..\\b", uri("/a\\..\\b"), unsafe("/a\\..\\b")],
    ["/a\\..", uri("/a\\.."), unsafe("/a\\..")],
    ["..\\b", uri("..\\b"), unsafe("..\\b")],
    ["/a/..\\b", uri("/a/..\\b"), unsafe("/a/..\\b")],
    ["/a%5C..%5Cb", uri("/a\\..\\b"), unsafe("/a\\..\\b")],
    ["/a/b\\c", uri("/a/b\\c"), uri("/a/b\\c")],
    // Dots that make no `..` segment.
    [".hidden", uri(".hidden"), uri(".hidden")],
    [".", uri("."), uri(".")],
    ["/a/..b", uri("/a/..b"), uri("/a/..b")],
    ["/a/b..", uri("/a/b.."), uri("/a/b..")],
    ["/a/...", uri("/a/..."), uri("/a/...")],
    // A NUL, raw or escaped; nothing before the arguments.
    ["/a/%00", unsafe("/a/\0"), unsafe("/a/\0")],
    ["/a/\0", unsafe("/a/\0"), unsafe("/a/\0")],
    ["", unsafe(""), unsafe("")],
    ["?x=1", unsafe("?x=1"), unsafe("?x=1")],
    // ngx_unescape_uri: a broken escape loses its `%`, a bad second digit
    // the first with it.
    ["/t%zz", uri("/tzz"), uri("/tzz")],
    ["/t%zz%az%", uri("/tzz"), uri("/tzz")],
    ["/t%4", uri("/t"), uri("/t")],
    ["/t%%41", uri("/t%41"), uri("/t%41")],
    ["/t%.%.", uri("/t.."), uri("/t..")],
    ["/t/%.%.", unsafe("/t/.."), unsafe("/t/..")],
  ];
  for (const [value, linux, windows] of cases) {
    await t.step(JSON.stringify(value), () => {
      deepStrictEqual(accelTarget(value, false), linux, "Linux");
      deepStrictEqual(accelTarget(value, true), windows, "Windows");
    });
  }
});
