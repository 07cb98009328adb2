/**
 * The methods `new Request` refuses (the Fetch standard's forbidden
 * methods: `CONNECT`, `TRACE`, `TRACK`) on every way the gateway derives a
 * request from the client's, beside nginx 1.22 on the same nginx.conf: an
 * upstream's `X-Accel-Redirect` to a named location (the client's method
 * kept) or to a URI (GET), an `error_page` to a named location (the
 * method kept) or to a URI, to a proxied, FastCGI or static target. nginx
 * refuses `TRACE` and `CONNECT` before any location and serves `TRACK` as
 * any other method; no row may write the gateway's `unexpected error`
 * line (a client's request must not write a stack into the log).
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

const NEEDS = suiteNeeds("request/forbidden_method_nginx_test.ts", ["nginx"]);

/** Where the upstream's `X-Accel-Redirect` sends each path. */
const ACCEL: Record<string, string> = {
  "/acc/named": "@np",
  "/acc/fnamed": "@nf",
  "/acc/snamed": "@ns",
  "/acc/uri": "/pp",
};

function conf(
  port: number,
  up: { http: number; fastcgi: number; refused: number },
): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  const down = `proxy_pass http://127.0.0.1:${up.refused};`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /acc/ { ${proxied} }
    location = /pp { ${proxied} }
    location @np { ${proxied} proxy_set_header X-Named 1; }
    location @nf { fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_param REQUEST_METHOD $request_method; }
    location @ns { rewrite ^ /page.html break; }
    location /down/ { ${down} error_page 502 = @np; }
    location /downf/ { ${down} error_page 502 = @nf; }
    location /downs/ { ${down} error_page 502 = @ns; }
    location /downu/ { ${down} error_page 502 /pp; }
    location /ret/ { return 404; error_page 404 = @np; }
    location /st/ { error_page 404 = @np; }
  }
}
`;
}

const PATHS = [
  "/acc/named",
  "/acc/fnamed",
  "/acc/snamed",
  "/acc/uri",
  "/down/a",
  "/downf/a",
  "/downs/a",
  "/downu/a",
  "/ret/a",
  "/st/missing",
];

/**
 * The forbidden methods as nginx reads them (a method in other letters
 * than capitals is a 400 before any location on both sides), and POST
 * beside them. A `CONNECT` is refused before any location on both sides
 * (apart from these: Deno's parser takes its target as an authority).
 */
const METHODS = ["TRACK", "TRACE", "POST", "track", "Trace"];

/**
 * Each side's static page, written when the file loads: a root written
 * just before its first request waits for the gateway's settle proof.
 */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/page.html`, "x");
}
bothSidesAhead(prepare);

Deno.test(
  "a method new Request forbids (TRACE, TRACK) redirected by X-Accel-Redirect or error_page: as nginx 1.22, and no unexpected error",
  NEEDS,
  async () => {
    const got: Record<string, string[]> = { nginx: [], gateway: [] };
    await using upstreams = sideUpstreams((side) => recording(got[side]!));
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
    for (const path of PATHS) {
      for (const method of METHODS) {
        const row = `${method} ${path}`;
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
            `${method} ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
          );
          // The request's error lines are written by its access line.
          const logged = await waitFor(
            () => logLines(prefix, "access.log").length > before.access,
            5000,
          ).then(() => true, () => false);
          const ports = new RegExp(`:${upstreams[side].http.port}\\b`, "g");
          seen[side]![row] = {
            status: raw.slice(9, 12),
            logged,
            http: got[side]!.splice(0),
            fastcgi: fcgi.seen.slice(before.fastcgi).map((s) =>
              s.params.find(([n]) => n === "REQUEST_METHOD")?.[1]
            ),
            errors: logLines(prefix, "error.log").slice(before.errors)
              .filter((l) => !l.includes("[notice]"))
              .map((l) =>
                maskErrorLine(l).replace(ports, ":UP").replaceAll(
                  prefix,
                  "PREFIX",
                )
              ),
          };
        }
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/**
 * An upstream that records each request's line and answers the
 * `X-Accel-Redirect` of {@linkcode ACCEL} for its paths (not to the named
 * location's request, which sends the client's URI again), 200 elsewhere.
 */
function recording(into: string[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const text = await readHead(conn);
    if (text === null) return;
    const head = text.slice(0, text.indexOf("\r\n\r\n"));
    const [method, target] = head.split(" ");
    into.push(`${method} ${target}`);
    const accel = /\r\nx-named: 1/i.test(head) ? undefined : ACCEL[target!];
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\n${
        accel === undefined ? "" : `X-Accel-Redirect: ${accel}\r\n`
      }Content-Length: 4\r\nConnection: close\r\n\r\npage`,
    );
  });
}
