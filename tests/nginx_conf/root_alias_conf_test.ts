/**
 * `root` and `alias` of one level as nginx 1.22 reads them
 * (ngx_http_core_root): one level takes one of them, once; the verdicts
 * are checked against `nginx -t`.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { refusals } from "../engine/_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";

/** [the location's lines, nginx 1.22's `[emerg]` messages] */
const LINES: [string, string[]][] = [
  ["root /x;", []],
  ["alias /y/;", []],
  ["root /x; alias /y/;", [
    '"alias" directive is duplicate, "root" directive was specified earlier',
  ]],
  ["alias /y/; root /x;", [
    '"root" directive is duplicate, "alias" directive was specified earlier',
  ]],
];

function conf(lines: string): string {
  return `http { server { listen 127.0.0.1:1; location /b/ { ${lines} } } }`;
}

Deno.test("root and alias in one location: nginx's duplicate", async (t) => {
  for (const [lines, expected] of LINES) {
    await t.step(lines, () => {
      deepStrictEqual(
        refusals(conf(lines)).map((e) => e.replace(/ in \/n\/.*$/, "")),
        expected,
      );
    });
  }
});

Deno.test("the root and alias verdicts are nginx 1.22's", async () => {
  await using p = await nginxPrefix("", {
    name: "root-alias-",
    dirs: ["logs"],
  });
  const file = join(p.prefix, "nginx.conf");
  for (const [lines, expected] of LINES) {
    await Deno.writeTextFile(
      file,
      `events {}\n${conf(lines).replace("127.0.0.1:1", "127.0.0.1:9")}`,
    );
    const text = await nginxTestOutput({ prefix: p.prefix, conf: file });
    const said = [...text.matchAll(/\[emerg\] (?:\d+#\d+: )?(.*) in \//g)]
      .map((m) => m[1]);
    deepStrictEqual(said, expected, lines);
  }
});
