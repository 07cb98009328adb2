/**
 * A GET or HEAD with a body beside nginx 1.22 on the same nginx.conf
 * (README, **get-body**): nginx forwards the body; `Deno.serve` hands a
 * handler no body for those methods, so wherever the gateway would forward
 * one (a `proxy_pass` or `fastcgi_pass` location, reached straight or
 * through `error_page`) it answers 400 and writes an `[error]` line at the
 * default level, and the upstream gets nothing; a location that sends no
 * body upstream (a static file) answers as nginx, and an empty body is
 * forwarded as nginx forwards it.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  type RawUpstream,
  readRequest,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  sideUpstreams,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("request/get_body_nginx_test.ts", ["nginx"]);

function conf(port: number, up: { http: number; fastcgi: number }): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /up/ { ${proxied} }
    location /fc/ { fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_param REQUEST_METHOD $request_method; }
    location /st/ { error_page 404 /up/page; }
    location @np { ${proxied} }
    location /named/ { error_page 404 = @np; }
  }
}
`;
}

/** Each side's static page, written when the file loads. */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/st`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/st/page.html`, "static");
}
bothSidesAhead(prepare);

const BODY = "Content-Length: 3\r\n\r\nabc";
const CHUNKED = "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";

/**
 * The rows: a request's method, target and framing, and whether the
 * gateway refuses it (`true`: nginx forwards a body the gateway cannot).
 */
const ROWS: [
  method: string,
  target: string,
  framing: string,
  refused: boolean,
][] = [
  ["GET", "/up/a", BODY, true],
  ["GET", "/up/a", CHUNKED, true],
  ["HEAD", "/up/a", BODY, true],
  ["GET", "/fc/a", BODY, true],
  ["GET", "/st/missing", BODY, true],
  ["GET", "/named/missing", CHUNKED, true],
  ["GET", "/up/a", "Content-Length: 0\r\n\r\n", false],
  ["GET", "/st/page.html", BODY, false],
  ["HEAD", "/st/page.html", CHUNKED, false],
];

Deno.test(
  "a GET or HEAD with a body: refused with 400 and an [error] line wherever the gateway would forward it, where nginx 1.22 forwards it",
  NEEDS,
  async () => {
    const got: Record<string, string[]> = { nginx: [], gateway: [] };
    await using upstreams = sideUpstreams((side) => recording(got[side]!));
    await using both = await bothSides(
      (port, side) =>
        conf(port, {
          http: upstreams[side].http.port,
          fastcgi: upstreams[side].fastcgi.port,
        }),
      { prepare },
    );
    for (const [method, target, framing, refused] of ROWS) {
      const row = `${method} ${target} ${framing.split(":")[0]}`;
      const seen: Record<string, unknown> = {};
      for (const side of ["nginx", "gateway"] as const) {
        const { port, prefix } = both[side];
        const fcgi = upstreams[side].fastcgi;
        const before = {
          fastcgi: fcgi.seen.length,
          errors: logLines(prefix, "error.log").length,
          access: logLines(prefix, "access.log").length,
        };
        const raw = await rawRequest(
          port,
          `${method} ${target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n${framing}`,
        );
        // The request's error lines are written by its access line.
        await waitFor(
          () => logLines(prefix, "access.log").length > before.access,
          5000,
        );
        seen[side] = {
          status: raw.slice(9, 12),
          upstream: [
            ...got[side]!.splice(0),
            ...fcgi.seen.slice(before.fastcgi).map((s) => `fastcgi ${s.body}`),
          ],
          errors: logLines(prefix, "error.log").slice(before.errors)
            .filter((l) => !l.includes("[notice]"))
            .map((l) => maskErrorLine(l).replaceAll(prefix, "PREFIX")),
        };
      }
      if (!refused) {
        deepStrictEqual(seen.gateway, seen.nginx, row);
        continue;
      }
      // nginx forwards the body: the row is real.
      const nginx = seen.nginx as { upstream: string[]; errors: string[] };
      deepStrictEqual(nginx.upstream.length, 1, row);
      deepStrictEqual(seen.gateway, {
        status: "400",
        upstream: [],
        // nginx's own lines for the request (an error page's missing
        // file), then the refusal's.
        errors: [
          ...nginx.errors,
          `TIME [error] PID#TID: *N client sent body in ${method} request: the gateway's runtime reads no body of a GET or HEAD, client: 127.0.0.1, server: t, request: "${method} ${target} HTTP/1.1", host: "t"`,
        ],
      }, row);
    }
  },
);

/** An upstream that records each request's line and body; answers 200. */
function recording(into: string[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const request = await readRequest(conn);
    if (request === null) return;
    const [method, target] = request.head.split(" ");
    into.push(`${method} ${target} ${JSON.stringify(request.body)}`);
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npage",
    );
  });
}
