/**
 * The `upstream:` field of the lines a request writes after its proxied
 * answer was redirected (an error page of an intercepted, failed or
 * refused answer; an `X-Accel-Redirect`), beside nginx 1.22 on the same
 * nginx.conf: nginx keeps `r->upstream` through the internal redirect, so
 * each later line names the server last tried; an SSI include's request
 * keeps its own (`ngx_http_log_error_handler` names the upstream of the
 * request whose line it is).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  type RawUpstream,
  readHead,
  refusedPort,
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

const NEEDS = suiteNeeds("request/kept_upstream_nginx_test.ts", ["nginx"]);

function conf(
  port: number,
  up: { http: number; fastcgi: number; refused: number },
): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http}`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /int/ {
      ${proxied}/err/; proxy_intercept_errors on;
      error_page 500 /static/missing.html;
    }
    location /intsmall/ {
      ${proxied}/err/; proxy_intercept_errors on; error_page 500 /small/;
    }
    location /small/ { client_max_body_size 10; }
    location /down/ {
      proxy_pass http://127.0.0.1:${up.refused}; error_page 502 /static/missing.html;
    }
    location /accel/ { ${proxied}/accel/; }
    location /fint/ {
      fastcgi_pass 127.0.0.1:${up.fastcgi}; fastcgi_intercept_errors on;
      fastcgi_param SCRIPT_NAME /status.php;
      error_page 404 /static/missing.html;
    }
    location /plain/ { ${proxied}/ok/; }
    location /static/ { }
    location /ssi/ { ssi on; }
  }
}
`;
}

/** The URIs an SSI page includes, one page each (`/ssi/int/a.html`). */
const INCLUDED = ["/int/a", "/down/a", "/accel/a", "/fint/a"];

/** Method, path and body of each request, in order. */
const ROWS: [string, string, string][] = [
  ["GET", "/int/a", ""],
  // The page's location refuses the body the proxy read: its 413's line.
  ["POST", "/intsmall/a", "b".repeat(20)],
  ["GET", "/down/a", ""],
  ["GET", "/accel/a", ""],
  ["GET", "/fint/a", ""],
  // An answer relayed as it is: the request's own later lines (none
  // here) and the next request's carry no upstream of it.
  ["GET", "/plain/a", ""],
  ["GET", "/static/missing2.html", ""],
  // An SSI include whose own proxied location answered through its
  // error_page or X-Accel-Redirect: the include's later lines name the
  // include's upstream (nginx's subrequest keeps its own r->upstream),
  // and a later include's lines none.
  ...INCLUDED.map((uri): [string, string, string] => [
    "GET",
    `/ssi${uri}.html`,
    "",
  ]),
];

/** Each side's pages: one per included upstream. */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/static`, { recursive: true });
  for (const uri of INCLUDED) {
    const page = `${prefix}/html/ssi${uri}.html`;
    Deno.mkdirSync(page.slice(0, page.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(
      page,
      // A second include (after the first is done: `wait`) names no
      // upstream of the first's.
      `[<!--# include virtual="${uri}" wait="yes" -->]` +
        `<!--# include virtual="/static/none.html" -->`,
    );
  }
}
bothSidesAhead(prepare);

Deno.test(
  "lines written after a proxied answer's error page or X-Accel-Redirect name the upstream last tried, as nginx 1.22",
  NEEDS,
  async () => {
    await using upstreams = sideUpstreams(() => upstream());
    const refused = refusedPort();
    await using both = await bothSides(
      (port, side) =>
        conf(port, {
          http: upstreams[side].http.port,
          fastcgi: upstreams[side].fastcgi.port,
          refused,
        }),
      { prepare },
    );
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const [method, path, body] of ROWS) {
      for (const side of ["nginx", "gateway"] as const) {
        const { port, prefix } = both[side];
        const before = {
          errors: logLines(prefix, "error.log").length,
          access: logLines(prefix, "access.log").length,
        };
        const raw = await rawRequest(
          port,
          `${method} ${path} HTTP/1.1\r\nHost: t\r\n` +
            (body === "" ? "" : `Content-Length: ${body.length}\r\n`) +
            `Connection: close\r\n\r\n${body}`,
        );
        // The request's error lines are written by its access line.
        await waitFor(
          () => logLines(prefix, "access.log").length > before.access,
          5000,
        );
        seen[side]![`${method} ${path}`] = {
          status: raw.slice(9, 12),
          errors: logLines(prefix, "error.log").slice(before.errors)
            .map((l) =>
              maskErrorLine(l)
                // Each side's own upstream and prefix.
                .replaceAll(`:${upstreams[side].http.port}/`, ":HTTP/")
                .replaceAll(`:${upstreams[side].fastcgi.port}"`, ':FASTCGI"')
                .replaceAll(prefix, "PREFIX")
            ),
        };
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/**
 * An upstream reading each request whole and answering 500 under `/err/`, an `X-Accel-Redirect` to a
 * missing file under `/accel/`, and 200 elsewhere.
 */
function upstream(): RawUpstream {
  return startRawUpstream(async (conn) => {
    let head = await readHead(conn);
    if (head === null) return;
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const buf = new Uint8Array(64);
    // The body read whole before the answer (a small body of the test's).
    while (head.length - head.indexOf("\r\n\r\n") - 4 < length) {
      const n = await conn.read(buf);
      if (n === null) break;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    const target = head.split(" ")[1] ?? "";
    const answer = target.startsWith("/err/")
      ? "HTTP/1.1 500 Failed\r\nContent-Length: 4\r\n"
      : target.startsWith("/accel/")
      ? "HTTP/1.1 200 OK\r\nX-Accel-Redirect: /static/gone.html\r\n" +
        "Content-Length: 4\r\n"
      : "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n";
    await writeText(conn, `${answer}Connection: close\r\n\r\npage`);
  });
}
