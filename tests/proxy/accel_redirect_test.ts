import { deepStrictEqual } from "node:assert/strict";
import { type AccelTarget, accelTarget } from "../../src/proxy/mod.ts";

const uri = (path: string, args = ""): AccelTarget => ({
  kind: "uri",
  uri: path,
  args,
});
const UNSAFE: AccelTarget = { kind: "unsafe" };

Deno.test("accelTarget() reads X-Accel-Redirect as ngx_http_parse_unsafe_uri does", async (t) => {
  const cases: [string, AccelTarget][] = [
    ["/files/a.txt", uri("/files/a.txt")],
    ["/files/a.txt?x=1&y=%20", uri("/files/a.txt", "x=1&y=%20")],
    ["/files/a%20b%2Ec", uri("/files/a b.c")],
    ["/files/%FF", uri("/files/\udcff")],
    ["/files/caf\xc3\xa9", uri("/files/café")],
    ["@named", { kind: "named", name: "@named" }],
    ["/a/..", UNSAFE],
    ["/a/../b", UNSAFE],
    ["/a\\..\\b", UNSAFE],
    ["/a/%2E%2E/b", UNSAFE],
    ["/a/%2e%2e", UNSAFE],
    ["/a/%00", UNSAFE],
    ["", UNSAFE],
    ["?x=1", UNSAFE],
    [".hidden", UNSAFE],
    ["/a/..b", uri("/a/..b")],
    ["/a/b..", uri("/a/b..")],
  ];
  for (const [value, expected] of cases) {
    await t.step(JSON.stringify(value), () => {
      deepStrictEqual(accelTarget(value), expected);
    });
  }
});
