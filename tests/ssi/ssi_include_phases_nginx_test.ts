/**
 * The preaccess and access phases of SSI includes beside nginx 1.22: a
 * subrequest's `limit_conn` and `limit_req` count once for its main
 * request (`r->main->limit_*_status`), its count goes back when the main
 * request ends (the pool the two share), and it has no access phase
 * (`ngx_http_core_access_phase` skips `r != r->main`), whichever way the
 * include reaches the location: directly, through its `error_page`, or
 * through an `X-Accel-Redirect` from FastCGI or a proxied upstream. Per
 * way: the page, then the limited location asked directly (its count given
 * back), and the error lines.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  maskErrorLine,
  readHead,
  startRawUpstream,
  startUpstream,
  writeText,
} from "../_utils.ts";
import { request } from "../response/_raw_exchange.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { startFastcgiResponder } from "../_fastcgi_responder.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("ssi/ssi_include_phases_nginx_test.ts", ["nginx"]);

function conf(port: number, ups: { fcgi: number; up: number }): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  limit_conn_zone $binary_remote_addr zone=addr:1m;
  limit_req_zone $binary_remote_addr zone=rq:1m rate=1r/m;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    root html;
    ssi on;
    location /limited/ { limit_conn addr 1; }
    location /denied/ { deny all; }
    location /rated/ { limit_req zone=rq; }
    location /ep-limited/ { error_page 404 /limited/page.html; }
    location /ep-denied/ { error_page 404 /denied/page.html; }
    location /php/ {
      fastcgi_pass 127.0.0.1:${ups.fcgi};
      fastcgi_param SCRIPT_NAME $fastcgi_script_name;
    }
    location /up/ { proxy_pass http://127.0.0.1:${ups.up}; }
  }
}
`;
}

/** The upstream's answers: an X-Accel-Redirect by the last segment. */
function upstreamAnswer(target: string): Response {
  const to = target.endsWith("/accel-limited")
    ? "/limited/page.html"
    : target.endsWith("/accel-denied")
    ? "/denied/page.html"
    : null;
  if (to === null) return new Response("missing", { status: 404 });
  return new Response("dropped", { headers: { "x-accel-redirect": to } });
}

/** Each way an include takes to the limited and the denied locations. */
const WAYS: [string, string][] = [
  ["directly", "/limited/page.html"],
  ["through its error_page", "/ep-limited/missing"],
  ["through FastCGI's X-Accel-Redirect", "/php/accel-limited.php"],
  ["through a proxied X-Accel-Redirect", "/up/accel-limited"],
  ["to deny all directly", "/denied/page.html"],
  ["to deny all through its error_page", "/ep-denied/missing"],
  ["to deny all through FastCGI's X-Accel-Redirect", "/php/accel-denied.php"],
  ["to deny all through a proxied X-Accel-Redirect", "/up/accel-denied"],
];

const PAGES: Record<string, string> = {
  ...Object.fromEntries(
    WAYS.map(([, uri], i) => [
      `way${i}.html`,
      `[<!--# include virtual="${uri}" -->]\n`,
    ]),
  ),
  // limit_req once per main request: the second include is not counted.
  "rated.html":
    '[<!--# include virtual="/rated/page.html" -->][<!--# include virtual="/rated/page.html" -->]\n',
  // A count taken by the first include is the one of the whole page.
  "twice.html":
    '[<!--# include virtual="/ep-limited/missing" -->][<!--# include virtual="/up/accel-limited" -->]\n',
};

/** Each side's pages. */
function prepare(prefix: string): void {
  const html = join(prefix, "html");
  for (const folder of ["limited", "denied", "rated"]) {
    Deno.mkdirSync(join(html, folder), { recursive: true });
    Deno.writeTextFileSync(join(html, folder, "page.html"), `${folder}\n`);
  }
  for (const [name, text] of Object.entries(PAGES)) {
    Deno.writeTextFileSync(join(html, name), text);
  }
}
bothSidesAhead(prepare);

/** The pages and one more that includes a slow upstream. */
function prepareSlow(prefix: string): void {
  prepare(prefix);
  Deno.writeTextFileSync(
    join(prefix, "html", "slow.html"),
    '[<!--# include virtual="/slow/x" -->]\n',
  );
}
bothSidesAhead(prepareSlow);

/** The status code and body of a GET (nginx's signature line left out). */
async function get(
  port: number,
  path: string,
): Promise<{ status: string; body: string }> {
  const read = await request(port, `GET ${path} HTTP/1.1\r\nHost: localhost`);
  return {
    status: read.status,
    body: read.body.replaceAll(/<hr><center>[^<]*<\/center>/g, ""),
  };
}

/**
 * The `[error]`, `[warn]` and `[info]` lines about requests, masked (a
 * client's keepalive close aside).
 */
function lines(prefix: string, from: number): string[] {
  return logLines(prefix, "error.log").slice(from)
    .filter((l) => l.includes(", request: "))
    .map((l) => maskErrorLine(l).replaceAll(prefix, "PREFIX"));
}

Deno.test(
  "SSI includes: limits count for the main request and go back when it ends, no access phase, on every way as nginx 1.22",
  NEEDS,
  async (t) => {
    await using fcgi = startFastcgiResponder();
    await using up = startUpstream((req) => upstreamAnswer(req.target));
    await using both = await bothSides(
      (port) => conf(port, { fcgi: fcgi.port, up: up.port }),
      { prepare },
    );
    const asked: [string, string][] = [
      ...WAYS.map(([what], i): [string, string] => [what, `/way${i}.html`]),
      ["limit_req, twice in a page", "/rated.html"],
      ["limit_req, on the next page", "/rated.html"],
      ["limit_conn, twice in a page", "/twice.html"],
    ];
    for (const [what, path] of asked) {
      await t.step(what, async () => {
        const seen = [];
        for (const side of [both.nginx, both.gateway]) {
          const before = logLines(side.prefix, "error.log").length;
          const page = await get(side.port, path);
          // The page has ended: its count is back for the next request.
          const after = await get(side.port, "/limited/page.html");
          seen.push({ page, after, lines: lines(side.prefix, before) });
        }
        deepStrictEqual(seen[1], seen[0]);
        strictEqual(seen[0]!.after.status, "200");
      });
    }
  },
);

Deno.test(
  "SSI includes: an include's limit_conn count holds while it runs, as nginx 1.22's",
  NEEDS,
  async () => {
    // Connection 2s is side s's include, held upstream until the test has
    // asked directly; 2s + 1 its request after the page, answered at once.
    const held = Array.from({ length: 4 }, () => Promise.withResolvers<void>());
    const arrived = Array.from(
      { length: 4 },
      () => Promise.withResolvers<void>(),
    );
    held[1]!.resolve();
    held[3]!.resolve();
    await using slow = startRawUpstream(async (conn, index) => {
      await readHead(conn);
      arrived[index]?.resolve();
      await held[index]?.promise;
      await writeText(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nslow\n",
      );
    });
    await using fcgi = startFastcgiResponder();
    await using both = await bothSides(
      (port) =>
        conf(port, { fcgi: fcgi.port, up: slow.port }).replace(
          "location /limited/ {",
          `location /slow/ { limit_conn addr 1; proxy_pass http://127.0.0.1:${slow.port}; }\n    location /limited/ {`,
        ),
      { prepare: prepareSlow },
    );
    const seen = [];
    for (const [index, side] of [both.nginx, both.gateway].entries()) {
      const page = get(side.port, "/slow.html");
      await arrived[2 * index]!.promise;
      const during = await get(side.port, "/slow/y");
      held[2 * index]!.resolve();
      const whole = await page;
      // The page has ended: the count is back.
      const after = await get(side.port, "/slow/z");
      seen.push({ during: during.status, whole, after: after.status });
    }
    deepStrictEqual(seen[1], seen[0]);
    strictEqual(
      seen[0]!.during,
      "503",
    );
  },
);
