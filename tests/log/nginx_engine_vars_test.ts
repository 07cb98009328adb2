/**
 * A `log_format` that reads the engine's variables (`$uri`, `$args`,
 * `$server_name`, `$arg_NAME`, `$cookie_NAME`, `$document_root`, a `map`
 * on `$status`, `set` variables, named captures, …), sent the same requests
 * by nginx 1.22 and by the gateway running the same nginx.conf: the access
 * lines are nginx's, with the values nginx has when it writes the line
 * (`$uri` after try_files, index and rewrite, the map on the final status).
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, startUpstream, waitFor } from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";

const FORMAT = [
  "$request|$status|uri=$uri|args=$args|qs=$query_string|is=$is_args",
  "name=$server_name|a=$arg_a|c=$cookie_c|root=$document_root",
  "file=$request_filename|real=$realpath_root|port=$server_port",
  "log=$loggable|ip=$client_ip|du=$document_uri|ct=$content_type",
  "cl=$content_length|set=$x|word=$word|up=$upstream_status",
  "host=$host|scheme=$scheme|addr=$server_addr|proto=$server_protocol",
  "U=$URI|b=${args}|m=$request_method|ru=$request_uri|id=$request_id",
].join("|");

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format vars '${FORMAT}';
  map $status $loggable { ~^[23] 0; default 1; }
  map $http_x_forwarded_for $client_ip { "" $remote_addr; default $http_x_forwarded_for; }
  log_format js escape=json '{"uri":"$uri","c":"$cookie_c","q":"$arg_q","ip":"$client_ip"}';
  access_log logs/all.log vars;
  server {
    listen 127.0.0.1:${port};
    server_name app.test other.test;
    root html;
    access_log logs/all.log vars;
    access_log logs/kept.log vars if=$loggable;
    access_log logs/json.log js;
    location / { try_files $uri $uri/ /index.html; }
    location /old/ { rewrite ^/old/(.*)$ /new/$1 last; }
    location /new/ { }
    location /api/ { proxy_pass http://127.0.0.1:${upstream}/; }
    location ~ ^/cap/(?<word>[a-z]+)$ { set $x "s-$word"; return 204; }
    location /ep/ { error_page 404 /index.html; }
  }
  server {
    listen 127.0.0.1:${port};
    server_name b.test;
    root html;
    access_log logs/all.log vars;
  }
}
`;
}

const COOKIE = "Cookie: b=2; c=three\r\n";

/** [what it is, the request] */
const REQUESTS: [string, string][] = [
  [
    "static hit",
    `GET /a.txt?a=1&b=2 HTTP/1.1\r\nHost: app.test\r\n${COOKIE}\r\n`,
  ],
  ["index", "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n"],
  [
    "try_files fallback",
    "GET /deep/route?x=1 HTTP/1.1\r\nHost: app.test\r\n\r\n",
  ],
  ["rewrite", "GET /old/b.txt?a= HTTP/1.1\r\nHost: app.test\r\n\r\n"],
  [
    "proxied",
    // With a body rawRequest cannot count responses (a smuggled request
    // could hide): the close ends the read, not its 10 s bound.
    "POST /api/login?a=%41 HTTP/1.1\r\nHost: app.test\r\nContent-Type: text/plain\r\n" +
    "Content-Length: 2\r\nX-Forwarded-For: 10.0.0.9\r\nConnection: close\r\n\r\nhi",
  ],
  ["404", "GET /new/none.txt HTTP/1.1\r\nHost: app.test\r\n\r\n"],
  ["error_page", "GET /ep/none?x=1 HTTP/1.1\r\nHost: app.test\r\n\r\n"],
  ["another server", "GET /a.txt HTTP/1.1\r\nHost: B.test\r\n\r\n"],
  ["capture and set", "GET /cap/word HTTP/1.1\r\nHost: app.test\r\n\r\n"],
  [
    "bytes and quotes",
    'GET /new/caf%C3%A9%22.txt?q=%22x HTTP/1.1\r\nHost: app.test\r\nCookie: c="é\\"\r\n' +
    'X-Forwarded-For: "1.2.3.4"\r\n\r\n',
  ],
  ["bad request line", "GET /%00 HTTP/1.1\r\nHost: app.test\r\n\r\n"],
  ["bad Host", "GET /x?a=1 HTTP/1.1\r\nHost: a/b\r\n\r\n"],
  ["invalid method", "get /m?a=1 HTTP/1.1\r\nHost: app.test\r\n\r\n"],
];

/** A line with what differs by design masked: ports, the prefix. */
function masked(line: string, prefix: string, port: number): string {
  return line.replaceAll(prefix, "PREFIX").replaceAll(`port=${port}`, "port=P")
    .replaceAll(`:${port}`, ":P").replace(/id=[0-9a-f]{32}$/, "id=ID");
}

/** Each side's site, its root a link: `$realpath_root` is what it names. */
function prepare(prefix: string): void {
  const site = join(prefix, "site");
  Deno.mkdirSync(join(site, "new"), { recursive: true });
  Deno.symlinkSync(site, join(prefix, "html"));
  Deno.writeTextFileSync(join(site, "index.html"), "app");
  Deno.writeTextFileSync(join(site, "a.txt"), "a");
  Deno.writeTextFileSync(join(site, "new", "b.txt"), "b");
}
bothSidesAhead(prepare);

Deno.test("log_format reads the engine's variables with the values nginx 1.22 writes", async () => {
  await using upstream = startUpstream();
  await using both = await bothSides((port) => conf(port, upstream.port), {
    prepare,
  });
  const { nginx: theirs, gateway: ours } = both;
  for (const [, request] of REQUESTS) {
    await rawRequest(theirs.port, request);
    await rawRequest(ours.port, request);
  }
  const sides = [theirs, ours];
  for (const { prefix } of sides) {
    await waitFor(() => logLines(prefix, "all.log").length === REQUESTS.length);
  }
  const [nginxLines, ourLines] = sides.map(({ prefix, port }) =>
    ["all.log", "kept.log", "json.log"].map((name) =>
      logLines(prefix, name).map((l) => masked(l, prefix, port))
    )
  );
  deepStrictEqual(ourLines, nginxLines);
  // What nginx wrote, in part: the values of the log phase.
  const [all = [], kept = [], json = []] = nginxLines!;
  deepStrictEqual(all[0]!.split("|")[11], "real=PREFIX/site");
  deepStrictEqual(all.map((l) => l.split("|").slice(1, 3).join("|")), [
    "200|uri=/a.txt",
    "200|uri=/index.html",
    "200|uri=/index.html",
    "200|uri=/new/b.txt",
    "200|uri=/api/login",
    "404|uri=/new/none.txt",
    "404|uri=/index.html",
    "200|uri=/a.txt",
    "204|uri=/cap/word",
    String.raw`404|uri=/new/caf\xC3\xA9\x22.txt`,
    "400|uri=",
    "400|uri=/x",
    "400|uri=-",
  ]);
  deepStrictEqual(kept.map((l) => l.split("|")[1]), [
    "404",
    "404",
    "404",
    "400",
    "400",
    "400",
  ]);
  deepStrictEqual(
    json[8],
    String
      .raw`{"uri":"/new/café\".txt","c":"\"é\\\"","q":"%22x","ip":"\"1.2.3.4\""}`,
  );
});
