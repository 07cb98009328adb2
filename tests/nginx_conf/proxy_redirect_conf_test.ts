/**
 * `proxy_redirect` lines of one level as nginx 1.22 reads them
 * (ngx_http_proxy_redirect): after `off` any other line is a duplicate, and
 * so is `off` after another; the verdicts are checked against `nginx -t`.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { refusals } from "../engine/_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";

const DUP = '"proxy_redirect" directive is duplicate';

/** [the location's lines, nginx 1.22's `[emerg]` message or none] */
const LINES: [string, string[]][] = [
  ["proxy_redirect off;", []],
  ["proxy_redirect off; proxy_redirect off;", [DUP]],
  ["proxy_redirect off; proxy_redirect default;", [DUP]],
  ["proxy_redirect default; proxy_redirect off;", [DUP]],
  ["proxy_redirect http://a/ /; proxy_redirect off;", [DUP]],
  ["proxy_redirect http://a/ /; proxy_redirect http://b/ /;", []],
  ["proxy_redirect default; proxy_redirect http://b/ /;", []],
];

function conf(lines: string): string {
  return `http { server { listen 127.0.0.1:1;
  location / { proxy_pass http://127.0.0.1:9; ${lines} } } }`;
}

Deno.test("proxy_redirect: a line after off, or off after another, is nginx's duplicate", async (t) => {
  for (const [lines, expected] of LINES) {
    await t.step(lines, () => {
      deepStrictEqual(
        refusals(conf(lines)).map((e) => e.replace(/ in \/n\/.*$/, "")),
        expected,
      );
    });
  }
});

Deno.test("the proxy_redirect verdicts are nginx 1.22's", async () => {
  await using p = await nginxPrefix("", {
    name: "proxy-redirect-",
    dirs: ["logs"],
  });
  const file = join(p.prefix, "nginx.conf");
  for (const [lines, expected] of LINES) {
    await Deno.writeTextFile(file, `events {}\n${conf(lines)}`);
    const text = await nginxTestOutput({ prefix: p.prefix, conf: file });
    const said = [...text.matchAll(/\[emerg\] (?:\d+#\d+: )?(.*) in \//g)]
      .map((m) => m[1]);
    deepStrictEqual(said, expected, lines);
  }
});
