/**
 * A `server_name` another server on the same address named first, beside
 * nginx 1.22: nginx keeps the first server for it and says so at start and
 * in `nginx -t` (`conflicting server name "…" on ADDRESS, ignored`,
 * ngx_http_server_names when ngx_hash_add_key answers NGX_BUSY). The
 * names are as nginx hashes them: lower case, `""` for a server without
 * `server_name` (ngx_http_core_merge_srv_conf), `_` as any other name,
 * `.example.com` claiming `example.com` too, regex names not at all. The
 * case came from a station file with two servers on one port and no
 * `server_name` (tests/testdata/nginx_conf/unseen10/
 * two_servers_no_name_one_port): nginx warned, the gateway said nothing.
 */
import { deepStrictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { maskErrorLine, rawRequest } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

const NEEDS = suiteNeeds("nginx_conf/server_names_conflict_nginx_test.ts", [
  "nginx",
]);

/** [what the row shows, its servers' `server { … }` bodies] */
const ROWS: [string, string[]][] = [
  ["two servers without a name", [
    "listen 127.0.0.1:1;",
    "listen 127.0.0.1:1;",
  ]],
  ["three servers without a name", [
    "listen 127.0.0.1:1;",
    "listen 127.0.0.1:1 default_server;",
    "listen 127.0.0.1:1;",
  ]],
  ["one name twice", [
    "listen 127.0.0.1:1; server_name localhost;",
    "listen 127.0.0.1:1; server_name localhost;",
  ]],
  ["names differing in case", [
    "listen 127.0.0.1:1; server_name Example.COM;",
    "listen 127.0.0.1:1; server_name www.example.com EXAMPLE.com;",
  ]],
  ["_ as a name", [
    "listen 127.0.0.1:1; server_name _;",
    "listen 127.0.0.1:1; server_name _;",
  ]],
  ['an explicit "" and none', [
    'listen 127.0.0.1:1; server_name "" a.test;',
    "listen 127.0.0.1:1;",
  ]],
  [".x claims x, x then .x", [
    "listen 127.0.0.1:1; server_name example.com;",
    "listen 127.0.0.1:1; server_name .example.com;",
  ]],
  [".x then x", [
    "listen 127.0.0.1:1; server_name .example.com;",
    "listen 127.0.0.1:1; server_name example.com;",
  ]],
  ["*.x then .x", [
    "listen 127.0.0.1:1; server_name *.example.com;",
    "listen 127.0.0.1:1; server_name .example.com www.example.com;",
  ]],
  ["a trailing wildcard twice", [
    "listen 127.0.0.1:1; server_name www.example.*;",
    "listen 127.0.0.1:1; server_name www.example.*;",
  ]],
  ["a regex twice (not hashed)", [
    "listen 127.0.0.1:1; server_name ~^a$;",
    "listen 127.0.0.1:1; server_name ~^a$;",
  ]],
  ["a name twice in one of two servers", [
    "listen 127.0.0.1:1; server_name a.test a.test;",
    "listen 127.0.0.1:1; server_name b.test;",
  ]],
  ["a name twice in a server alone on its address", [
    "listen 127.0.0.1:1; server_name a.test a.test;",
  ]],
  ["two addresses", ["listen 127.0.0.1:1;", "listen 127.0.0.1:2;"]],
  ["two ports, each shared", [
    "listen 127.0.0.1:2; listen 127.0.0.1:1;",
    "listen 127.0.0.1:1; listen 127.0.0.1:2;",
  ]],
  ["a wildcard address after a specific one", [
    "listen 1; listen 127.0.0.1:1;",
    "listen 127.0.0.1:1; listen 1;",
  ]],
];

/** nginx's `[warn]` texts without their time, pid and place. */
function warnsOf(stderr: string): string[] {
  return [
    ...stderr.matchAll(/\[warn\] (?:\d+#\d+: )?(.*?)(?: in \/\S+:\d+)?$/gm),
  ]
    .map((m) => m[1]!);
}

/**
 * The gateway's warnings in nginx's words, without their place: its own
 * notes (`"…" is ignored: …`) are not nginx's.
 */
function ours(conf: string): string[] {
  return loadNginxConf(conf).warnings.filter((w) => !/ is ignored: /.test(w))
    .map((w) => w.replace(/ in \/\S+?:\d+$/, ""));
}

Deno.test(
  "a name another server on the address named first is warned about in nginx's words",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", {
      name: "server-names-conflict-",
      dirs: ["logs"],
    });
    const theirs: string[] = [];
    const mine: string[] = [];
    for (const [label, servers] of ROWS) {
      await Deno.writeTextFile(
        p.conf,
        `events {}
http {
  access_log off;
${servers.map((s) => `  server { ${s} return 204; }`).join("\n")}
}
`,
      );
      const out = await nginxTestOutput({ prefix: p.prefix, conf: p.conf });
      theirs.push(`${label}: ${JSON.stringify(warnsOf(out))}`);
      mine.push(`${label}: ${JSON.stringify(ours(p.conf))}`);
    }
    deepStrictEqual(mine, theirs);
  },
);

Deno.test(
  "the first server keeps a name given twice, and the start's error log says the second was ignored",
  NEEDS,
  async () => {
    // At `warn`, the gateway writes its start's warnings to its error log;
    // nginx writes them to the log it starts with (`-e` here; a station's
    // logs/error.log, at `notice`, ngx_log_init).
    await using sides = await bothSides((port) =>
      `${PROCESS}events {}
error_log logs/error.log warn;
http {
${TEMP}
  access_log off;
  server { listen 127.0.0.1:${port}; server_name a.test; return 200 "first\\n"; }
  server { listen 127.0.0.1:${port}; server_name b.test A.test; return 200 "second\\n"; }
  server { listen 127.0.0.1:${port}; return 200 "third\\n"; }
  server { listen 127.0.0.1:${port}; return 200 "fourth\\n"; }
}
`
    );
    const answers = async (port: number) =>
      await Promise.all(
        ["a.test", "b.test", "c.test"].map(async (host) =>
          (await rawRequest(
            port,
            `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
          )).split("\r\n\r\n")[1]
        ),
      );
    deepStrictEqual(
      await answers(sides.gateway.port),
      await answers(sides.nginx.port),
    );
    // The lines about server names (the gateway also notes what it ignores
    // and the missing client-app folder).
    const warns = (lines: string[], port: number) =>
      lines.map(maskErrorLine).filter((l) => l.includes(" server name "))
        .map((l) => l.replaceAll(String(port), "PORT"));
    deepStrictEqual(
      warns(logLines(sides.gateway.prefix, "error.log"), sides.gateway.port),
      warns(logLines(sides.nginx.prefix, "early.log"), sides.nginx.port),
    );
  },
);
