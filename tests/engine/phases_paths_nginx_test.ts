/**
 * The index module, `try_files`, `error_page` and `rewrite` on names nginx
 * hands to the OS as they are, beside nginx 1.22 on the same nginx.conf:
 * an absolute `index` is an internal redirect nginx makes without testing
 * it (ngx_http_index_handler), an index that names a folder or nothing
 * redirects as a file does, a rewrite to an empty URI is a 500
 * (ngx_http_script_regex_end_code), and a file name with `..` or a
 * trailing slash is what `open()` and `stat()` make of it: `a/..` needs
 * `a` to be a folder (and leaves the folder a link leads to), `r.txt/` is
 * no file (`ENOTDIR`). Deno run with granular permissions (the gateway's:
 * `--allow-read`, not `--allow-all`, as this test runs) resolves such a
 * name lexically before the system call; the gateway must not take that
 * answer.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { maskErrorLine, rawRequest } from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";

/** The gateway's own notes of what it ignores: lines nginx -t never prints. */
const IGNORED_NOTE = /^"[^"]+" is ignored: /;

const NEEDS = suiteNeeds("engine/phases_paths_nginx_test.ts", ["nginx"]);

function conf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location = /ok { return 200 "ok\\n"; }
    location /ia/ { index /ok; }
    location /ib/ { index none.html /ok; }
    location /iloop/ { index /iloop/; }
    location /ivar/ { index $arg_i; }
    location /idir/ { index sub; }
    location /e8/ { error_page 404 /e8/../r.txt; }
    location /ef/ { try_files $uri/../../r.txt =404; }
    location /tf/ { try_files $uri =418; }
    location /rz/ { rewrite ^ ? last; }
    location /rv/ { rewrite ^ $arg_u last; }
    location /rb/ { rewrite ^ $arg_u break; }
  }
}
`;
}

/** The paths asked, each on its own connection. */
const PATHS = [
  // An absolute index: redirected to untested, last or reached.
  "/ia/",
  "/ib/",
  "/iloop/",
  // An index from a variable: absolute, empty (the folder itself), a file.
  "/ivar/?i=/ok",
  "/ivar/?i=",
  "/ivar/?i=x.txt",
  "/ivar/?i=none",
  // An index naming a folder: redirected to it, then the slash's 301.
  "/idir/",
  // `..` after a name that is no folder, a folder, a link.
  "/e8/a",
  "/ef/a",
  "/ef/d",
  "/ef/l",
  "/ef/x.txt",
  // A trailing slash after a file.
  "/tf/x.txt/",
  "/tf/x.txt",
  "/tf/d/",
  // A rewrite to an empty URI.
  "/rz/a",
  "/rv/a?u=",
  "/rv/a?u=/ok",
  "/rb/a?u=",
];

/**
 * Each side's files, written when the file loads: `html/r.txt`, the
 * folders the rows name, and `ef/l`, a link to a folder outside the root
 * whose parent holds no `r.txt`.
 */
function prepare(prefix: string): void {
  const html = `${prefix}/html`;
  for (const dir of ["ivar", "idir/sub", "ef/d", "tf/d", "ia", "ib"]) {
    Deno.mkdirSync(`${html}/${dir}`, { recursive: true });
  }
  Deno.mkdirSync(`${prefix}/outer/in`, { recursive: true });
  Deno.symlinkSync(`${prefix}/outer/in`, `${html}/ef/l`);
  Deno.writeTextFileSync(`${html}/r.txt`, "r\n");
  Deno.writeTextFileSync(`${html}/ivar/x.txt`, "x\n");
  Deno.writeTextFileSync(`${html}/ef/x.txt`, "x\n");
  Deno.writeTextFileSync(`${html}/tf/x.txt`, "x\n");
}
bothSidesAhead(prepare);

/** A side's answers: status line, Location and body, one per path. */
async function answers(port: number): Promise<string[]> {
  const out: string[] = [];
  for (const path of PATHS) {
    const raw = await rawRequest(
      port,
      `GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
    );
    const [head = "", body = ""] = raw.split("\r\n\r\n");
    const location = /^location: (.*)$/im.exec(head)?.[1] ?? "";
    // The status code alone (nginx sends no reason for 418), the port in
    // an absolute Location is each side's own, and the error pages name
    // each server.
    out.push(
      `${path} ${head.split(" ")[1]} ${location.replace(/:\d+\//, ":PORT/")} ${
        JSON.stringify(
          body.replace(/nginx\/1\.22\.1|station-gateway/, "SERVER"),
        )
      }`,
    );
  }
  return out;
}

/** A side's request lines, masked, its prefix as PREFIX. */
function requestLines(prefix: string): string[] {
  return logLines(prefix, "error.log").filter((l) => l.includes("request: "))
    .map((l) => maskErrorLine(l).replaceAll(prefix, "PREFIX"));
}

Deno.test(
  "absolute and empty index values, a rewrite to an empty URI, and file names with `..` or a trailing slash: as nginx 1.22",
  NEEDS,
  async () => {
    await using both = await bothSides((port) => conf(port), { prepare });
    const theirs = await answers(both.nginx.port);
    const ours = await answers(both.gateway.port);
    deepStrictEqual(ours, theirs);
    const lines = requestLines(both.nginx.prefix);
    // The cycles', the two open()s' and the empty URIs' lines at least.
    ok(lines.length >= 8, lines.join("\n"));
    deepStrictEqual(requestLines(both.gateway.prefix), lines);
  },
);

/** `server {}` bodies whose `index` or `rewrite` nginx -t warns of or refuses. */
const CHECKS = [
  'index "";',
  'index a.html "";',
  'index /x "";',
  "index /x a.html;",
  "index /x /y a.html;",
  "index a.html /x;",
  'rewrite ^ "" last;',
  'rewrite ^ "";',
  'location / { rewrite ^ "" break; }',
  "rewrite ^ ? last;",
];

/** nginx's `[warn]` and `[emerg]` texts without their place. */
function nginxSays(stderr: string): string[] {
  return [
    ...stderr.matchAll(
      /\[(warn|emerg)\] (?:\d+#\d+: )?(.*?)(?: in \/\S+:\d+)?$/gm,
    ),
  ].map((m) => `${m[1]} ${m[2]}`);
}

/** The gateway's warnings in nginx's words and its first refusal. */
function gatewaySays(conf: string): string[] {
  const result = loadNginxConf(conf);
  const unplaced = (w: string) => w.replace(/ in \/\S+?:\d+$/, "");
  return [
    ...result.warnings.filter((w) => !IGNORED_NOTE.test(w)).map((w) =>
      `warn ${unplaced(w)}`
    ),
    ...(result.ok ? [] : [`emerg ${unplaced(result.message)}`]),
  ];
}

Deno.test(
  "--check warns of an absolute index before the last and refuses an empty index or rewrite replacement, as nginx -t",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", {
      name: "phases-paths-check-",
      dirs: ["logs"],
    });
    const theirs: string[] = [];
    const mine: string[] = [];
    for (const body of CHECKS) {
      await Deno.writeTextFile(
        p.conf,
        `events {}
http {
  access_log off;
  server { listen 127.0.0.1:1; ${body} }
}
`,
      );
      const out = await nginxTestOutput({ prefix: p.prefix, conf: p.conf });
      theirs.push(`${body} ${JSON.stringify(nginxSays(out))}`);
      mine.push(`${body} ${JSON.stringify(gatewaySays(p.conf))}`);
    }
    deepStrictEqual(mine, theirs);
  },
);
