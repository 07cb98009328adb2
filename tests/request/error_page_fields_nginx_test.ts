/**
 * The client's `Range` and conditional fields on an error page's request,
 * beside nginx 1.22 on the same nginx.conf: a proxied page's upstream gets
 * them as the client sent them; a file page acts on them only when the
 * status nginx's filters see is 200 (`=200`, or `=` with the page's own).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  type RawUpstream,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { bothSides, bothSidesAhead, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("request/error_page_fields_nginx_test.ts", ["nginx"]);

/** The asks a page's request may carry, as the client sends them. */
const ASKS = [
  "Range: bytes=0-1",
  'If-None-Match: "x"',
  "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT",
  'If-Match: "y"',
  "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT",
  'If-Range: "z"',
];

function conf(port: number, up: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location = /pp { proxy_pass http://127.0.0.1:${up}; }
    location /p/ { return 404; error_page 404 /pp; }
    location /s/ { return 404; error_page 404 /static/page.html; }
    location /s200/ { return 404; error_page 404 =200 /static/page.html; }
    location /sown/ { return 404; error_page 404 = /static/page.html; }
    location /static/ { }
  }
}
`;
}

/** Paths, and the asks sent with each: all of them, or one at a time. */
const ROWS: [string, string[]][] = [
  ["/p/a", ASKS],
  ...["/s/a", "/s200/a", "/sown/a"].flatMap((path) =>
    [
      ["Range: bytes=0-1"],
      ["If-Modified-Since: Sun, 09 Sep 2001 01:46:40 GMT"],
      [
        'If-Match: "nope"',
      ],
    ].map((asks): [string, string[]] => [path, asks])
  ),
];

/** Each side's error page. */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/static`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/static/page.html`, "page");
  // Its time is the If-Modified-Since sent (nginx's `exact`).
  Deno.utimeSync(`${prefix}/html/static/page.html`, 1e9, 1e9);
}
bothSidesAhead(prepare);

Deno.test(
  "an error page's request carries the client's Range and conditional fields to its upstream; a file page acts on them only for 200, as nginx 1.22",
  NEEDS,
  async () => {
    const got = { nginx: [] as string[][], gateway: [] as string[][] };
    const upstreams = { nginx: asks(got.nginx), gateway: asks(got.gateway) };
    await using _n = upstreams.nginx;
    await using _g = upstreams.gateway;
    await using both = await bothSides(
      (port, side) => conf(port, upstreams[side].port),
      { prepare },
    );
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const [path, fields] of ROWS) {
      for (const side of ["nginx", "gateway"] as const) {
        const raw = await rawRequest(
          both[side].port,
          `GET ${path} HTTP/1.1\r\nHost: t\r\n${
            fields.map((f) => `${f}\r\n`).join("")
          }Connection: close\r\n\r\n`,
        );
        const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
        seen[side]![`${path} ${fields.join(" | ")}`] = {
          status: raw.slice(9, 12),
          // The page's bytes, or the part a range asked for.
          body: body.startsWith("<") ? "(nginx's page)" : body,
          upstream: got[side].splice(0),
        };
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/** An upstream recording the asks each request carried, answering 200. */
function asks(into: string[][]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const names = new Set(ASKS.map((a) => a.split(":")[0]!.toLowerCase()));
    into.push(
      // Names compared without case: the gateway sends them lower-case.
      head.split("\r\n").map((l) => l.replace(/^[^:]+/, (n) => n.toLowerCase()))
        .filter((l) => names.has(l.split(":")[0]!)).sort(),
    );
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nfrom",
    );
  });
}
