/**
 * `client_max_body_size` on every way a location answers, beside nginx 1.22
 * on the same nginx.conf: nginx refuses a declared length past the limit
 * once the location is found (ngx_http_core_find_config_phase), before its
 * `return`, its `rewrite … last` or `if`, its `limit_req` and `limit_conn`,
 * `allow`/`deny` and `auth_basic`, and before the content handler; a
 * chunked body has no length then, and only the handlers that read it
 * count it. Each row compares the status, what the upstreams received and
 * the error lines written.
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
  logLines,
  PROCESS,
  sideUpstreams,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("request/body_size_nginx_test.ts", ["nginx"]);

function conf(port: number, up: { http: number; fastcgi: number }): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  const small = "client_max_body_size 10;";
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  limit_req_zone $binary_remote_addr zone=once:1m rate=1r/m;
  limit_conn_zone $binary_remote_addr zone=conns:1m;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /ret/ { ${small} return 200 "x"; }
    location /rw/ { ${small} rewrite ^/rw/(.*)$ /up/$1 last; }
    location /up/ { ${proxied} }
    location /rwsmall/ { rewrite ^ /px/again last; }
    location /if/ { ${small} if ($request_method = POST) { return 200 "y"; } ${proxied} }
    location /lr/ { ${small} limit_req zone=once; ${proxied} }
    location /lc/ { ${small} limit_conn conns 1; ${proxied} }
    location /deny/ { ${small} deny all; }
    location /auth/ { ${small} auth_basic "gate"; auth_basic_user_file htpasswd; ${proxied} }
    location /st/ { ${small} }
    location /px/ { ${small} ${proxied} }
    location /fc/ { ${small} fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_LENGTH $content_length; }
  }
}
`;
}

/**
 * Method, path, the body's framing and size (the limit is 10), in order:
 * the `limit_req` rows depend on the ones before (one request a minute).
 */
const ROWS: ["length" | "chunked", string, number, string?][] = [
  ["length", "/ret/a", 20],
  ["length", "/ret/a", 10],
  ["chunked", "/ret/a", 20],
  // Refused before the rewrite: the body never reaches /up/'s upstream.
  ["length", "/rw/a", 20],
  ["length", "/rw/a", 10],
  ["chunked", "/rw/a", 20],
  // The location a `rewrite … last` finds is checked in its turn.
  ["length", "/rwsmall/a", 20],
  ["length", "/if/a", 20],
  ["chunked", "/if/a", 20],
  // The refused request does not take limit_req's one request.
  ["length", "/lr/a", 20],
  ["length", "/lr/a", 5],
  ["chunked", "/lr/a", 20],
  ["length", "/lc/a", 20],
  ["length", "/lc/a", 5],
  ["chunked", "/lc/a", 20],
  // Refused before access: 413, not 403 or 401.
  ["length", "/deny/a", 20],
  ["chunked", "/deny/a", 20],
  ["length", "/auth/a", 20],
  ["chunked", "/auth/a", 20],
  ["length", "/st/page.html", 20],
  ["chunked", "/st/page.html", 20],
  ["length", "/px/a", 20],
  ["chunked", "/px/a", 20],
  // The slash's redirect comes after the check.
  ["length", "/px", 20],
  ["length", "/fc/a", 20],
  ["chunked", "/fc/a", 20],
  // The length as nginx prints it (`%O`), without the zeros sent first.
  ["length", "/px/a", 20, "0000020"],
];

Deno.test(
  "client_max_body_size is checked where the location is found, before return, rewrite, if, limits, access and content: as nginx 1.22",
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
      {
        prepare: async (prefix) => {
          await Deno.mkdir(`${prefix}/html/st`, { recursive: true });
          await Deno.writeTextFile(`${prefix}/html/st/page.html`, "x");
          await Deno.writeTextFile(`${prefix}/conf/htpasswd`, "u:x\n");
        },
      },
    );
    // Every row's answer on each side, compared at the end: a failure
    // shows each row that differs.
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const [framing, path, size, digits = String(size)] of ROWS) {
      const body = "b".repeat(size);
      const row = `POST ${path} (${framing}, ${digits} bytes)`;
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
          `POST ${path} HTTP/1.1\r\nHost: t\r\n` +
            (framing === "length"
              ? `Content-Length: ${digits}\r\nConnection: close\r\n\r\n${body}`
              : "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                `${size.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
        );
        // The request's error lines are written by its access line.
        await waitFor(
          () => logLines(prefix, "access.log").length > before.access,
          5000,
        );
        seen[side]![row] = {
          status: raw.slice(9, 12),
          http: got[side]!.splice(0),
          fastcgi: fcgi.seen.slice(before.fastcgi).map((s) =>
            `${
              s.params.find(([n]) => n === "CONTENT_LENGTH")?.[1]
            } ${s.body.length}`
          ),
          errors: logLines(prefix, "error.log").slice(before.errors)
            .filter((l) => !l.includes("[notice]"))
            .map(maskErrorLine),
        };
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/** An upstream that records each request's line and body size, and answers 200. */
function recording(into: string[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const read = await readRequest(conn);
    if (read === null) return;
    const length = Number(
      /\r\ncontent-length: *(\d+)/i.exec(read.head)?.[1] ?? 0,
    );
    into.push(`${read.head.split(" ").slice(0, 2).join(" ")} ${length}`);
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
}
