/**
 * The request flow's `error_page` rules beside nginx 1.22:
 * - `add_header` and `expires` on an error page's answer see the error's
 *   status (`r->err_status`), not the page's own 200, whichever handler
 *   answers the page (a file after `try_files`, a file of an `alias`
 *   location, a `return`, a proxied location);
 * - no `error_page` after a redirection cycle (`r->uri_changes` is 0): the
 *   500 is nginx's own page, with one line.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { htmlAhead, startNginxSite } from "../_nginx.ts";
import {
  freePort,
  maskErrorLine,
  rawRequest,
  startUpstream,
  waitFor,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { filterStatus } from "../../src/request/content_answer.ts";
import { errorResponse } from "../../src/response/mod.ts";
import type { RequestVars } from "../../src/engine/mod.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

Deno.test("filterStatus() is the error page's status unless the gateway made the answer", () => {
  const vars = {} as RequestVars;
  const log = () => {};
  const cases: [string, number | undefined, () => Response, number][] = [
    ["no error page", undefined, () => new Response("x"), 200],
    ["a page answered 200", 404, () => new Response("x"), 404],
    ["=200 over a 404", 200, () => new Response("x"), 200],
    [
      "a proxied page's 500",
      404,
      () => new Response("x", { status: 500 }),
      404,
    ],
    ["the page itself fails", 404, () => errorResponse(403, {}), 403],
    ["a page that redirects", 404, () => errorResponse(301, {}), 301],
  ];
  for (const [name, errStatus, make, want] of cases) {
    const request = {
      vars,
      log,
      origin: "http://localhost",
      ...(errStatus === undefined ? {} : { errStatus }),
    };
    const response = make();
    strictEqual(filterStatus(response, request), want, name);
  }
});

/** The server both sides run; `$HTML` is the files' folder, `$UP` the upstream. */
const SERVER = `
    root $HTML;
    add_header X-Server s;
    error_page 404 /page.html;
    location / {
      try_files $uri $uri/ /index.html;
      add_header X-Page p;
      add_header X-Always a always;
      expires 1h;
    }
    location /uploads/ {
      alias $HTML/uploads/;
      try_files $uri $uri/ =404;
      add_header X-Uploads u;
    }
    location /eq/ { error_page 404 = /page.html; }
    location /ok/ { error_page 404 =200 /page.html; }
    location /ret/ { error_page 404 /said; }
    location = /said { return 200 "said\\n"; add_header X-Said s; }
    location /up/ { error_page 404 /api/page; }
    location /api/ { proxy_pass http://127.0.0.1:$UP; add_header X-Api a; }
`;

const FILES = {
  "index.html": "<p>app</p>\n",
  "uploads/a.txt": "a\n",
};

const TARGETS = [
  "/uploads/missing",
  "/uploads/a.txt",
  "/missing.png",
  "/eq/missing",
  "/ok/missing",
  "/ret/missing",
  "/up/missing",
];

/** Status and the filter's fields of one answer. */
async function answer(port: number, target: string): Promise<string> {
  const raw = await rawRequest(
    port,
    `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
  );
  const [head = ""] = raw.split("\r\n\r\n");
  const [line = "", ...fields] = head.split("\r\n");
  const seen = fields.map((f) => f.toLowerCase())
    .filter((f) => /^(x-[a-z]+|expires|cache-control):/.test(f))
    .map((f) => f.replace(/^expires:.*/, "expires: *")).sort();
  return `${line.split(" ")[1]} ${seen.join(", ")}`;
}

Deno.test(
  "add_header and expires on an error page see the error's status, as nginx 1.22",
  ON_LINUX,
  async () => {
    await using up = startUpstream(() => new Response("page\n"));
    const server = SERVER.replaceAll("$UP", String(up.port));
    await using nginx = await startNginxSite({ server, files: FILES });
    const port = freePort();
    const prefix = await Deno.makeTempDir({ prefix: "error-page-filter-" });
    try {
      await Deno.mkdir(join(prefix, "logs"));
      await Deno.mkdir(join(prefix, "conf"), { recursive: true });
      const conf = join(prefix, "conf", "nginx.conf");
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n error_log ${prefix}/logs/error.log;\n access_log off;\n server {\n listen 127.0.0.1:${port};\n server_name localhost;\n${
          server.replaceAll("$HTML", nginx.root)
        }\n }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      const want: string[] = [];
      const got: string[] = [];
      for (const target of TARGETS) {
        want.push(`${target}: ${await answer(nginx.port, target)}`);
        got.push(`${target}: ${await answer(gw.port, target)}`);
      }
      deepStrictEqual(got, want);
    } finally {
      await Deno.remove(prefix, { recursive: true });
    }
  },
);

/** Redirection cycles of each kind, with an `error_page` for their 500. */
const CYCLES = `
    root $HTML;
    error_page 500 502 503 504 /50x.html;
    location / { try_files $uri $uri/ /index.html; }
    location /admin.html { try_files $uri $uri/ /admin.html; }
    location /loop/ { rewrite ^ /loop/again last; }
    location /named/ { try_files $uri @again; }
    location @again { rewrite ^ /named/x last; }
`;

/** One request per kind: each cycle writes exactly one line. */
const CYCLE_TARGETS = ["/admin.html", "/loop/x", "/named/x"];

const CYCLE_FILES = {
  "index.html": "<p>app</p>\n",
  "50x.html": "<p>50x</p>\n",
};
htmlAhead([FILES, CYCLE_FILES]);

Deno.test(
  "no error_page after a redirection cycle: nginx's own 500 and one line, as nginx 1.22",
  ON_LINUX,
  async () => {
    await using nginx = await startNginxSite({
      server: CYCLES,
      files: CYCLE_FILES,
    });
    const port = freePort();
    const prefix = await Deno.makeTempDir({ prefix: "error-page-cycle-" });
    try {
      await Deno.mkdir(join(prefix, "logs"));
      await Deno.mkdir(join(prefix, "conf"), { recursive: true });
      const conf = join(prefix, "conf", "nginx.conf");
      const log = join(prefix, "logs", "error.log");
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n error_log ${log};\n access_log off;\n server {\n listen 127.0.0.1:${port};\n server_name localhost;\n${
          CYCLES.replaceAll("$HTML", nginx.root)
        }\n }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      const statusAndBody = async (p: number, target: string) => {
        const raw = await rawRequest(
          p,
          `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        );
        const [head = "", body = ""] = raw.split("\r\n\r\n");
        return `${head.split(" ")[1]} ${body.includes("50x") ? "page" : "own"}`;
      };
      const want: string[] = [];
      const got: string[] = [];
      for (const target of CYCLE_TARGETS) {
        want.push(`${target}: ${await statusAndBody(nginx.port, target)}`);
        got.push(`${target}: ${await statusAndBody(gw.port, target)}`);
      }
      deepStrictEqual(got, want);
      const cycleLines = (lines: string[]) =>
        lines.filter((l) => l.includes("cycle")).map((l) =>
          maskErrorLine(l).replace(/, server: [^,]*/, "").replace(
            /, host: .*$/,
            "",
          )
        );
      await waitFor(
        () =>
          Deno.readTextFileSync(log).split("\n").filter((l) =>
            l.includes("cycle")
          ).length >= CYCLE_TARGETS.length,
        5000,
      );
      deepStrictEqual(
        cycleLines((await Deno.readTextFile(log)).split("\n")),
        cycleLines(nginx.errorLines()),
      );
    } finally {
      await Deno.remove(prefix, { recursive: true });
    }
  },
);
