/**
 * The request's name beside nginx 1.22, two servers on one port: a `Host`
 * field's name as `ngx_http_validate_host` cuts it (the first `:` outside
 * `[...]`, one trailing dot, ASCII letters lowered) and the server it
 * chooses; an absolute-form target's authority as
 * `ngx_http_parse_request_line` reads it (a `@`, `%`, `_`, `#` or second
 * `:` is "client sent invalid request") and as `ngx_http_validate_host`
 * then checks its host ("client sent invalid host in request line"). Each
 * row compares the status, the body (`$host`), the access line and the
 * error lines.
 */
import { deepStrictEqual } from "node:assert/strict";
import { maskErrorLine, rawRequest, waitFor } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("routing/host_forms_nginx_test.ts", ["nginx"]);

function conf(port: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  log_format h '$status "$host" "$http_host" "$request" "$server_name"';
  access_log logs/access.log h;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    return 200 "localhost $host";
  }
  server {
    listen 127.0.0.1:${port};
    server_name admin.local;
    return 200 "admin $host";
  }
}
`;
}

/** `Host` field values, sent with `GET /h`. */
const HOSTS = [
  "admin.local:80:80",
  "admin.local:80",
  "admin.local::",
  "admin.local:",
  "admin.local.",
  "admin.local.:80",
  "admin.local:a.",
  // The last dot of the whole value is not the name's: nginx keeps it.
  "admin.local.:8.0",
  "ADMIN.Local",
  "[::1]",
  "[::1]:80",
  "[::1]:80:80",
  "[::1",
  "[admin.local]",
  "admin.local]",
  "a[b]:80",
  ".admin.local",
  "admin.local@x",
  // Refused: "client sent invalid host header".
  ":80",
  "admin..local",
  "admin.local..",
  "[]",
  // Bytes above 0x7f as they are (ngx_strlow lowers A-Z only).
  "\u00c0dmin.local",
];

/** Absolute-form targets, sent with `Host: localhost`. */
const TARGETS = [
  "http://x@admin.local/h",
  "http://%61dmin.local/h",
  "http://a:b@admin.local/h",
  "http://admin.local:80:80/h",
  "http://admin.local#/h",
  "http://admin.local:80#/h",
  "http://admin.local/h",
  "http://ADMIN.local./h",
  "http://admin.local:/h",
  "http://admin.local:8a/h",
  "http://admin.local:99999/h",
  "http://admin.local?x",
  "https://admin.local/h",
  "HTTP://admin.local/h",
  "ftp://admin.local/h",
  "http://[::1]/h",
  "http://[::1]:80/h",
  "http://[v1.x]/h",
  "http://[::1/h",
  "http://[::1]x/h",
  "http://a_b/h",
  "http://a~b/h",
  "http://a-b.c/h",
  "http://.admin.local/h",
  "http://:80/h",
  "http://@a/h",
  "http://a@/h",
  // Parsed, then refused: "client sent invalid host in request line".
  "http://admin..local/h",
  "http://admin.local../h",
  "http://[a..b]/h",
];

/** One request's answer and lines on one side. */
function observed(
  raw: string,
  prefix: string,
  before: { access: number; errors: number },
): string[] {
  const [head = "", ...body] = raw.split("\r\n\r\n");
  return [
    head.slice(0, 12),
    head.startsWith("HTTP/1.1 200") ? body.join("") : "",
    // The format has no time and no byte counts: compared as written.
    ...logLines(prefix, "access.log").slice(before.access),
    ...logLines(prefix, "error.log").slice(before.errors).filter((l) =>
      l.includes("client: ")
    ).map(maskErrorLine),
  ];
}

Deno.test({
  name:
    "a Host field's name and an absolute-form target's authority choose the server and $host as nginx 1.22's, and are refused where nginx refuses them",
  ...NEEDS,
  async fn() {
    await using sides = await bothSides(conf);
    const requests = [
      ...HOSTS.map((h) => `GET /h HTTP/1.1\r\nHost: ${h}\r\n`),
      ...TARGETS.map((t) => `GET ${t} HTTP/1.1\r\nHost: localhost\r\n`),
    ].map((r) => `${r}Connection: close\r\n\r\n`);
    const got: string[][] = [];
    const want: string[][] = [];
    for (const request of requests) {
      for (
        const [side, into] of [[sides.gateway, got], [
          sides.nginx,
          want,
        ]] as const
      ) {
        const before = {
          access: logLines(side.prefix, "access.log").length,
          errors: logLines(side.prefix, "error.log").length,
        };
        const raw = await rawRequest(side.port, request);
        // Every row writes one access line.
        await waitFor(() =>
          logLines(side.prefix, "access.log").length > before.access
        );
        into.push([
          JSON.stringify(request),
          ...observed(raw, side.prefix, before),
        ]);
      }
    }
    deepStrictEqual(got, want);
  },
});

Deno.test({
  name:
    "an absolute-form target with an empty host is served as the origin-form path Deno.serve makes of it, where nginx refuses it",
  ...NEEDS,
  async fn() {
    await using sides = await bothSides(conf);
    const got: string[] = [];
    for (const target of ["http:///h", "http://?x"]) {
      // Deno.serve's URL is `http://admin.local/http:///h`, as for
      // `GET /http:///h`: nothing tells the two apart (README).
      const request =
        `GET ${target} HTTP/1.1\r\nHost: admin.local\r\nConnection: close\r\n\r\n`;
      const theirs = await rawRequest(sides.nginx.port, request);
      const ours = await rawRequest(sides.gateway.port, request);
      got.push(`${target} ${theirs.slice(9, 12)} ${ours.slice(9, 12)}`);
    }
    deepStrictEqual(got, ["http:///h 400 200", "http://?x 400 200"]);
  },
});
