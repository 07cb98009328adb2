/**
 * `proxy_next_upstream` and `fastcgi_next_upstream` as nginx 1.22 reads
 * them (`ngx_conf_set_bitmask_slot`, `ngx_http_proxy_merge_loc_conf`): the
 * words each module takes, `invalid value "x"`, `duplicate value "x"`,
 * `off` winning over the others, several directives of one level ORed,
 * the nearest level's replacing its parent's; `_tries` and `_timeout`.
 * The verdicts are checked against `nginx -t` itself.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";
import { compileText, phases } from "../engine/_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import {
  NEXT_ERROR,
  NEXT_INVALID_HEADER,
  NEXT_NON_IDEMPOTENT,
  NEXT_OFF,
  NEXT_TIMEOUT,
} from "../../src/upstream/try_next.ts";

/** [the location's lines, nginx 1.22's `[emerg]` and `[warn]` messages] */
const LINES: [string, string[]][] = [
  ["proxy_next_upstream error;", []],
  ["proxy_next_upstream Error TIMEOUT;", []],
  ["proxy_next_upstream off;", []],
  // 1.22 has no "cannot be used with other parameters": off wins.
  ["proxy_next_upstream off error;", []],
  ["proxy_next_upstream error off;", []],
  ["proxy_next_upstream non_idempotent invalid_header;", []],
  [
    "proxy_next_upstream http_500 http_502 http_503 http_504 http_403 http_404 http_429 updating;",
    [],
  ],
  ["proxy_next_upstream x;", ['[emerg] invalid value "x"']],
  ["proxy_next_upstream error http_501;", ['[emerg] invalid value "http_501"']],
  ["proxy_next_upstream error error;", ['[warn] duplicate value "error"']],
  ["proxy_next_upstream error; proxy_next_upstream timeout;", []],
  ["proxy_next_upstream_tries 3; proxy_next_upstream_timeout 10s;", []],
  ["proxy_next_upstream_tries 0; proxy_next_upstream_timeout 0;", []],
  [
    "proxy_next_upstream_tries x;",
    ['[emerg] "proxy_next_upstream_tries" directive invalid number'],
  ],
  [
    "proxy_next_upstream_tries -1;",
    ['[emerg] "proxy_next_upstream_tries" directive invalid number'],
  ],
  [
    "proxy_next_upstream_timeout x;",
    ['[emerg] "proxy_next_upstream_timeout" directive invalid value'],
  ],
  ["fastcgi_next_upstream http_500 http_503 http_404;", []],
  ["fastcgi_next_upstream http_502;", ['[emerg] invalid value "http_502"']],
  ["fastcgi_next_upstream http_504;", ['[emerg] invalid value "http_504"']],
  ["fastcgi_next_upstream_tries 2;", []],
];

function conf(lines: string, listen = "127.0.0.1:80"): string {
  const pass = lines.startsWith("fastcgi")
    ? "fastcgi_pass 127.0.0.1:9;"
    : "proxy_pass http://127.0.0.1:9;";
  return `http {
  server {
    listen ${listen};
    location / { ${pass} ${lines} }
  }
}`;
}

/** The gateway's errors and warnings for a text, without their place. */
function verdicts(http: string): string[] {
  const text = `events {}\n${http}`;
  const directives = parseNginxConf("/n/conf/nginx.conf", {
    readTextFile: () => text,
    readDirFiles: () => [],
  });
  const result = compileHttp(directives, {
    file: "/n/conf/nginx.conf",
    prefix: "/n",
    caseless: false,
  });
  const place = / in \/n\/.*$/;
  return [
    ...result.errors.map((e) => `[emerg] ${e.replace(place, "")}`),
    // Less the gateway's own note on `events {}`.
    ...result.warnings.filter((w) => !w.startsWith('"events"'))
      .map((w) => `[warn] ${w.replace(place, "")}`),
  ];
}

Deno.test("*_next_upstream refuses and warns with nginx 1.22's messages", async (t) => {
  for (const [lines, expected] of LINES) {
    await t.step(lines, () => {
      deepStrictEqual(verdicts(conf(lines)), expected);
    });
  }
});

Deno.test("the *_next_upstream verdicts are nginx 1.22's", async () => {
  await using p = await nginxPrefix("", {
    name: "next-upstream-",
    dirs: ["logs"],
  });
  const file = join(p.prefix, "nginx.conf");
  for (const [lines, expected] of LINES) {
    await Deno.writeTextFile(file, `events {}\n${conf(lines, "127.0.0.1:1")}`);
    const text = await nginxTestOutput({ prefix: p.prefix, conf: file });
    const said = [...text.matchAll(/(\[\w+\]) (?:\d+#\d+: )?(.*) in \//g)]
      .map((m) => `${m[1]} ${m[2]}`);
    deepStrictEqual(said, expected, lines);
  }
});

/** [http-level lines, server-level lines, location lines, the location's bits, tries, timeout] */
const MERGES: [string, string, string, number, number, number][] = [
  ["", "", "", NEXT_ERROR | NEXT_TIMEOUT, 0, 0],
  ["proxy_next_upstream error;", "", "", NEXT_ERROR, 0, 0],
  [
    "proxy_next_upstream error;",
    "proxy_next_upstream timeout;",
    "",
    NEXT_TIMEOUT,
    0,
    0,
  ],
  // The nearest level's directives replace the parent's, never add to them.
  [
    "proxy_next_upstream error;",
    "",
    "proxy_next_upstream invalid_header;",
    NEXT_INVALID_HEADER,
    0,
    0,
  ],
  // Two directives of one level are one value (ngx_conf_set_bitmask_slot ORs).
  [
    "",
    "",
    "proxy_next_upstream error; proxy_next_upstream non_idempotent;",
    NEXT_ERROR | NEXT_NON_IDEMPOTENT,
    0,
    0,
  ],
  ["", "", "proxy_next_upstream error off timeout;", NEXT_OFF, 0, 0],
  [
    "proxy_next_upstream off;",
    "",
    "proxy_next_upstream error;",
    NEXT_ERROR,
    0,
    0,
  ],
  [
    "proxy_next_upstream_tries 2;",
    "proxy_next_upstream_timeout 3s;",
    "",
    NEXT_ERROR | NEXT_TIMEOUT,
    2,
    3000,
  ],
  [
    "proxy_next_upstream_tries 2;",
    "",
    "proxy_next_upstream_tries 0;",
    NEXT_ERROR | NEXT_TIMEOUT,
    0,
    0,
  ],
];

Deno.test("proxy_next_upstream is inherited as nginx merges it (http, server, location)", async (t) => {
  for (const [http, server, location, mask, tries, timeoutMs] of MERGES) {
    await t.step(`${http} | ${server} | ${location}`, () => {
      const compiled = compileText(`http {
  ${http}
  server {
    listen 127.0.0.1:80;
    ${server}
    location / { proxy_pass http://127.0.0.1:9; ${location} }
  }
}`);
      const { content } = phases(compiled, "/");
      if (content.kind !== "proxy") throw new Error(content.kind);
      deepStrictEqual(content.conf.proxyNextUpstream, {
        mask,
        tries,
        timeoutMs,
      });
    });
  }
});
