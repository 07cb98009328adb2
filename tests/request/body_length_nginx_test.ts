/**
 * A body's length once it is read, beside nginx 1.22 on the same
 * nginx.conf: nginx sets `headers_in.content_length_n` to what it received
 * once a body without a declared length (chunked) is read whole
 * (ngx_http_request_body_chunked_filter), so after an internal redirect
 * (an upstream's `X-Accel-Redirect`, an `error_page`) the new location's
 * `client_max_body_size` applies to it (413 and nginx's line, nothing sent
 * on) and `$content_length` is the received size for `proxy_set_header`,
 * `add_header`, FastCGI's `CONTENT_LENGTH` and the access line. Each row
 * is sent with a declared length and chunked, small and past the limit.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  type RawUpstream,
  readRequest,
  refusedPort,
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

const NEEDS = suiteNeeds("request/body_length_nginx_test.ts", ["nginx"]);

/** Where the upstream's `X-Accel-Redirect` sends each path. */
const ACCEL: Record<string, string> = {
  "/acc/small": "/small/a",
  "/acc/echo": "/echo/a",
  "/acc/fc": "/fc/a",
};

function conf(
  port: number,
  up: { http: number; fastcgi: number; refused: number },
): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  const fastcgi = `fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_param CONTENT_LENGTH $content_length;`;
  const down = `proxy_pass http://127.0.0.1:${up.refused};`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format len '$request_method $uri $status [$content_length]';
  access_log logs/access.log len;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /acc/ { ${proxied} }
    location /small/ { client_max_body_size 100; ${proxied} }
    location /echo/ { ${proxied} proxy_set_header X-M $content_length;
      add_header X-CL "[$content_length]" always; }
    location /fc/ { ${fastcgi} }
    location /down/ { ${down} error_page 502 = /small/ep; }
    location /down2/ { ${down} error_page 502 = /echo/ep; }
    location /down3/ { ${down} error_page 502 = /fc/ep; }
    location /fcdown/ { fastcgi_pass 127.0.0.1:${up.refused};
      error_page 502 = /small/ep; }
  }
}
`;
}

/** The paths; each is sent with each framing and size below. */
const PATHS = [
  "/acc/small",
  "/acc/echo",
  "/acc/fc",
  "/down/a",
  "/down2/a",
  "/down3/a",
  "/fcdown/a",
];

/** The limit of `/small/` is 100. */
const FRAMINGS: ["length" | "chunked", number][] = [
  ["length", 50],
  ["chunked", 50],
  ["chunked", 0],
  ["length", 0],
  ["length", 12_000],
  ["chunked", 12_000],
];

Deno.test(
  "a body read without a declared length is the request's length after an internal redirect: the new location's client_max_body_size and $content_length, as nginx 1.22",
  NEEDS,
  async () => {
    const got: Record<string, string[]> = { nginx: [], gateway: [] };
    await using upstreams = sideUpstreams((side) => recording(got[side]!));
    const refused = refusedPort();
    await using both = await bothSides((port, side) =>
      conf(port, {
        http: upstreams[side].http.port,
        fastcgi: upstreams[side].fastcgi.port,
        refused,
      })
    );
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const path of PATHS) {
      for (const [framing, size] of FRAMINGS) {
        const body = "b".repeat(size);
        const row = `POST ${path} (${framing}, ${size} bytes)`;
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
                ? `Content-Length: ${size}\r\nConnection: close\r\n\r\n${body}`
                : "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                  (size === 0 ? "" : `${size.toString(16)}\r\n${body}\r\n`) +
                  "0\r\n\r\n"),
          );
          // The request's error lines are written by its access line.
          await waitFor(
            () => logLines(prefix, "access.log").length > before.access,
            5000,
          );
          // Each side's upstream has a port of its own.
          const ports = new RegExp(
            `:(?:${upstreams[side].http.port}|${fcgi.port})\\b`,
            "g",
          );
          seen[side]![row] = {
            status: raw.slice(9, 12),
            xcl: /\r\nx-cl: *([^\r]*)/i.exec(raw)?.[1] ?? "(none)",
            http: got[side]!.splice(0),
            fastcgi: fcgi.seen.slice(before.fastcgi).map((s) =>
              `CONTENT_LENGTH=${
                s.params.find(([n]) => n === "CONTENT_LENGTH")?.[1]
              } ${s.body.length}`
            ),
            errors: logLines(prefix, "error.log").slice(before.errors)
              .filter((l) => !l.includes("[notice]"))
              .map((l) => maskErrorLine(l).replace(ports, ":UP")),
            access: logLines(prefix, "access.log").slice(before.access),
          };
        }
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/**
 * An upstream that records each request's line, its `X-M` field, its
 * length and body size, and answers the `X-Accel-Redirect` of
 * {@linkcode ACCEL} for its paths, 200 elsewhere.
 */
function recording(into: string[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const read = await readRequest(conn);
    if (read === null) return;
    const { head, body } = read;
    // Every Content-Length line: a second one is a framing error to a strict
    // upstream, which a first-line read would not show.
    const lines = [...head.matchAll(/\r\ncontent-length: *(\d+)/gi)];
    const declared = lines.length === 0
      ? undefined
      : lines.map((m) => m[1]).join(" and ");
    const [method, target] = head.split(" ");
    const xm = /\r\nx-m: *([^\r]*)/i.exec(head)?.[1] ?? "(none)";
    into.push(
      `${method} ${target} X-M=${xm} Content-Length=${
        declared ?? "(none)"
      } ${body.length}`,
    );
    const accel = ACCEL[target!];
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\n${
        accel === undefined ? "" : `X-Accel-Redirect: ${accel}\r\n`
      }Content-Length: 4\r\nConnection: close\r\n\r\npage`,
    );
  });
}
