/**
 * `error_page` for nginx's own 494-497 and the 498 page, beside nginx 1.22
 * on the same nginx.conf. nginx looks a page up by the code it was given
 * (`r->err_status`: `error_page 497 =301 https://$host$request_uri;`, the
 * classic redirect of plain HTTP sent to a TLS port), not by the 400 their
 * pages go out with, so `error_page 400` does not catch them; a page of
 * theirs without `=` goes out with 400 as they do (ngx_http_core_error_page)
 * and a URL with 302. 498 (NGX_HTTP_CANCELED) has 404's page, sent with
 * 498. After its own 495-497 page nginx drops keep-alive, not after 494's
 * (ngx_http_special_response_handler). A 304 of a static file carries no
 * `Content-Length` on either side; nginx keeps one on `return 304` and a
 * proxied 304, which Deno.serve drops (README 304-length: not compared).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("response/special_error_pages_nginx_test.ts", [
  "nginx",
]);

const CODES = [494, 495, 496, 497, 498];

/** [location prefix, its error_page line for CODES] */
const PAGES: [string, string][] = [
  ["uri", "/page.html"],
  ["redirect", "=301 https://$host$request_uri"],
  ["url", "https://x.test/"],
  ["named", "@named"],
  ["ok", "=200 /page.html"],
];

function conf(port: number, upstream: number): string {
  const returns = (prefix: string) =>
    CODES.map((c) => `location /${prefix}/${c} { return ${c}; }`).join(" ");
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  log_format st '$request_uri $status';
  access_log logs/access.log st;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    server_tokens off;
    root html;
${
    PAGES.map(([prefix, page]) =>
      `    location /${prefix}/ { error_page ${CODES.join(" ")} ${page}; ${
        returns(prefix)
      } }`
    ).join("\n")
  }
    location /p400/ { error_page 400 404 /page.html; ${returns("p400")} }
    location /none/ { ${returns("none")} }
    location /r304 { return 304; }
    location = /end { return 204; }
    location /up/ { proxy_pass http://127.0.0.1:${upstream}; }
    location @named { return 200 "named\\n"; }
  }
}
`;
}

/** A time both sides' file has, for an `If-Modified-Since` that matches it. */
const MTIME = new Date("2024-01-15T10:23:45Z");

function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html`);
  Deno.writeTextFileSync(`${prefix}/html/page.html`, "the page\n");
  Deno.writeTextFileSync(`${prefix}/html/f.txt`, "file\n");
  Deno.utimeSync(`${prefix}/html/f.txt`, MTIME, MTIME);
}
bothSidesAhead(prepare);

/** An upstream answering 304 with a `Content-Length` field. */
function upstream() {
  return startRawUpstream(async (conn) => {
    await readHead(conn);
    await writeText(
      conn,
      'HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nETag: "x"\r\nConnection: close\r\n\r\n',
    );
  });
}

const GET = (uri: string, more = "") =>
  `GET ${uri} HTTP/1.1\r\nHost: t\r\n${more}Connection: close\r\n\r\n`;

/** [what it is, the bytes sent] */
const REQUESTS: [string, string][] = [
  ...[...PAGES.map(([p]) => p), "p400", "none"].flatMap((prefix) =>
    CODES.map((
      c,
    ): [string, string] => [`/${prefix}/${c}`, GET(`/${prefix}/${c}`)])
  ),
  // Keep-alive after each one's own page: the request behind it is
  // answered after 494's and 498's, not after 495-497's.
  ...CODES.map((c): [string, string] => [
    `/none/${c}, then /none/498`,
    `GET /none/${c} HTTP/1.1\r\nHost: t\r\n\r\n${GET("/none/498")}`,
  ]),
  [
    "static 304",
    GET("/f.txt", `If-Modified-Since: ${MTIME.toUTCString()}\r\n`),
  ],
  ["return 304", GET("/r304")],
  ["proxied 304", GET("/up/x")],
];

/** What a client read of each response, the footers made alike. */
function seen(raw: string): Record<string, unknown>[] {
  const out = [];
  let rest = raw;
  for (let i = 0; i < 4 && rest.startsWith("HTTP/1.1 "); i++) {
    const end = rest.indexOf("\r\n\r\n");
    const head = rest.slice(0, end);
    const field = (name: string) =>
      new RegExp(`\r\n${name}: *([^\r]*)`, "i").exec(head)?.[1] ?? null;
    const status = Number(head.slice(9, 12));
    const length = Number(field("content-length") ?? 0);
    const bodyLength = status === 304 ? 0 : length;
    out.push({
      status,
      type: field("content-type"),
      location: field("location"),
      // README 304-length: Deno.serve drops a 304's Content-Length. A
      // page's length is its body's, compared below (footers differ).
      length: status === 304 ? "(304)" : field("content-length") !== null,
      lastModified: field("last-modified"),
      body: rest.slice(end + 4, end + 4 + bodyLength).replace(
        "<hr><center>nginx</center>",
        "<hr><center>station-gateway</center>",
      ),
    });
    rest = rest.slice(end + 4 + bodyLength);
  }
  // README 413-connection: what the gateway sends a request behind its own
  // closing page (a 400 head, then the close), where nginx has closed.
  const cut = out.findIndex((r, i) =>
    i > 0 && r.status === 400 && r.type === null && r.length === false
  );
  return cut < 0 ? out : out.slice(0, cut);
}

Deno.test({
  name:
    "error_page finds 494-497 by their own code, 498 has 404's page, and each keeps or drops keep-alive as nginx 1.22",
  ...NEEDS,
  fn: async () => {
    const upstreams = { nginx: upstream(), gateway: upstream() };
    await using _n = upstreams.nginx;
    await using _g = upstreams.gateway;
    await using sides = await bothSides(
      (port, side) => conf(port, upstreams[side].port),
      { prepare },
    );
    const rows: Record<string, Record<string, unknown>> = {};
    for (const side of ["nginx", "gateway"] as const) {
      const { port, prefix } = sides[side];
      const read: Record<string, unknown> = {};
      for (const [name, text] of REQUESTS) {
        read[name] = seen(await rawRequest(port, text));
      }
      // Each line is written as its answer ends: the last one's, then.
      await rawRequest(port, GET("/end"));
      await waitFor(
        () => logLines(prefix, "access.log").some((l) => l.startsWith("/end ")),
        5000,
      );
      rows[side] = { read, access: logLines(prefix, "access.log").sort() };
    }
    // The rows ask what they mean to: a 304 of the file, the redirect.
    const status = (name: string) =>
      ((rows.nginx!.read as Record<string, { status: number }[]>)[name])![0]!
        .status;
    deepStrictEqual(
      [status("static 304"), status("/redirect/497"), status("/url/494")],
      [304, 301, 302],
    );
    deepStrictEqual(rows.gateway, rows.nginx);
  },
});
