/**
 * Side by side with nginx 1.22: the same locations, the same raw requests,
 * one recording upstream; what the upstream receives and the redirects the
 * client sees are compared.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { startNginxServer } from "../_nginx.ts";
import { compileRegex, type UpstreamConf } from "../../src/engine/mod.ts";
import {
  implicitUpstream,
  locationConf,
  serveCompiled,
  serveLocations,
  value,
} from "./_location.ts";
import { compileText } from "../engine/_conf.ts";

function reply(head: string): string {
  if (/^GET \S*\/redir/.test(head)) {
    return "HTTP/1.1 302 Found\r\nLocation: http://backend/login?a=1\r\n" +
      "Refresh: 3; url=http://backend/x\r\nContent-Length: 0\r\n" +
      "Connection: close\r\n\r\n";
  }
  return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: up\r\n" +
    "X-Accel-Expires: 5\r\nX-Up: 1\r\nConnection: close\r\n\r\nok";
}

/** Splits a recorded head into its request line, leading fields and the rest. */
function shape(head: string, leading: number) {
  const [line, ...fields] = head.split("\r\n\r\n")[0]!.split("\r\n");
  const rest = fields.slice(leading).map((f) => {
    const colon = f.indexOf(":");
    return `${f.slice(0, colon).toLowerCase()}:${f.slice(colon + 1)}`;
  }).sort();
  return { line, lead: fields.slice(0, leading), rest };
}

/** The leading fields the gateway wrote: its client fields are lower case. */
function leadingCount(head: string): number {
  const fields = head.split("\r\n\r\n")[0]!.split("\r\n").slice(1);
  const first = fields.findIndex((f) =>
    f.split(":")[0] === f.split(":")[0]!.toLowerCase()
  );
  return first < 0 ? fields.length : first;
}

const REQUESTS: [string, string][] = [
  [
    "defaults: HTTP/1.0, Host $proxy_host, Connection close, hop-by-hop dropped",
    "GET /api/x%41?y=1 HTTP/1.1\r\nHost: station.local\r\nConnection: close, X-Foo\r\n" +
    "X-Foo: bar\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nCookie: a=1\r\n" +
    "X-Forwarded-For: 203.0.113.9\r\nProxy-Connection: keep-alive\r\n\r\n",
  ],
  [
    "a body: Content-Length after the set fields",
    "POST /api/login HTTP/1.1\r\nHost: station.local\r\nContent-Type: text/plain\r\n" +
    "Content-Length: 5\r\nConnection: close\r\n\r\nhello",
  ],
  [
    "a chunked body is sent with its length",
    "POST /api/chunked HTTP/1.1\r\nHost: station.local\r\nTransfer-Encoding: chunked\r\n" +
    "Connection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
  ],
  [
    "HEAD goes as HEAD",
    "HEAD /api/head HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n",
  ],
  [
    "an empty POST keeps its Content-Length: 0",
    "POST /api/empty HTTP/1.1\r\nHost: station.local\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
  ],
  [
    "proxy_set_header with variables, empty values, HTTP/1.1",
    "GET /set/a?b=2 HTTP/1.1\r\nHost: Station.Local:8081\r\nCookie: a=1\r\n" +
    "X-Forwarded-For: 10.9.9.9\r\nConnection: close\r\n\r\n",
  ],
  [
    "no URI part: the target as sent",
    "GET /raw/a%41//b/../c?z HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n",
  ],
  [
    "escaped UTF-8 is escaped again, an escaped ~ is not",
    "GET /api/%E4%B8%AD/%7e HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n",
  ],
  [
    "raw UTF-8 without an escape goes as its bytes",
    "GET /api/\u4e2d/\u00e9?q=\u00e9 HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n",
  ],
  [
    "raw UTF-8 without a URI part goes as sent",
    "GET /raw/\u4e2d%41 HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n",
  ],
  [
    "a longer URI part",
    "GET /v1/x%25y%7C HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n",
  ],
  [
    "an Upgrade where the location does not ask for one is a plain GET",
    "GET /api/ws HTTP/1.1\r\nHost: station.local\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n" +
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  ],
];

/** Requests through the rewrite module: only the compiled text runs it. */
const REWRITE_REQUESTS: [string, string][] = [
  ["rewrite … break: the URI part is not applied", "/rw/a%41b?k=v"],
  ["rewrite … break: $uri escaped again", "/rw/a|b"],
  ["rewrite … break without a URI part", "/rwn/a|b"],
  ["rewrite … last into a location with a URI part", "/rl/a%41?q=1"],
  ["a regex location without a URI part", "/re2/a%41//b"],
].map(([what, target]) => [
  what!,
  `GET ${target} HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n`,
]);

const NGINX_SERVER = `
    location /rw/ { rewrite ^/rw/(.*)$ /x/$1 break; proxy_pass http://backend/p/; }
    location /rwn/ { rewrite ^/rwn/(.*)$ /x/$1 break; proxy_pass http://backend; }
    location /rl/ { rewrite ^/rl/(.*)$ /v1/$1 last; }
    location ~ ^/re2/ { proxy_pass http://backend; }
    location /api/ { proxy_pass http://backend/; }
    location /set/ {
      proxy_pass http://backend/;
      proxy_http_version 1.1;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header Cookie "";
      proxy_set_header X-Missing $http_x_missing;
    }
    location /raw/ { proxy_pass http://backend; }
    location /v1/ { proxy_pass http://backend/v2/; }
    location /re/ {
      proxy_pass http://backend/;
      proxy_redirect ~^http://[^/]+/(.*)$ /other/$1;
    }
`;

function gatewayLocations() {
  return [
    locationConf({ name: "/api/", pass: "http://backend/" }),
    locationConf({
      name: "/set/",
      pass: "http://backend/",
      version: "1.1",
      set: [
        ["X-Real-IP", "$remote_addr"],
        ["Host", "$host"],
        ["X-Forwarded-For", "$proxy_add_x_forwarded_for"],
        ["Cookie", ""],
        ["X-Missing", "$http_x_missing"],
      ],
    }),
    locationConf({ name: "/raw/", pass: "http://backend" }),
    locationConf({ name: "/v1/", pass: "http://backend/v2/" }),
    locationConf({
      name: "/re/",
      pass: "http://backend/",
      redirect: [{
        kind: "regex",
        regex: compileRegex("^http://[^/]+/(.*)$", false),
        to: value("/other/$1"),
      }],
    }),
  ];
}

Deno.test("proxied locations send upstream what nginx 1.22 sends", async (t) => {
  await t.step("locations built by hand", () => sendsAsNginx("hand"));
  await t.step("the same nginx.conf text compiled", () => sendsAsNginx("text"));
});

/** The nginx.conf text both run, for the upstream on `port`. */
function confText(port: number): { http: string; server: string } {
  return {
    http: `  upstream backend { server 127.0.0.1:${port}; }`,
    server: NGINX_SERVER,
  };
}

/** The gateway for the same configuration: built by hand or compiled. */
function gatewayFor(how: "hand" | "text", port: number) {
  if (how === "text") {
    const { http, server } = confText(port);
    return serveCompiled(
      compileText(
        `http {\n${http}\n server {\n listen 8081;\n${server}\n }\n}`,
      ),
    );
  }
  const backend: UpstreamConf = {
    ...implicitUpstream(`127.0.0.1:${port}`),
    name: "backend",
    explicit: true,
  };
  return serveLocations(gatewayLocations(), [backend]);
}

async function sendsAsNginx(how: "hand" | "text"): Promise<void> {
  await using up = startRawUpstream(async (conn, _i, u) => {
    const head = await readHead(conn);
    if (head === null) return;
    u.heads.push(head);
    await writeText(conn, reply(head));
  });
  await using nginx = await startNginxServer(confText(up.port));
  await using gw = gatewayFor(how, up.port);
  const requests = how === "text"
    ? [...REQUESTS, ...REWRITE_REQUESTS]
    : REQUESTS;
  for (const [what, request] of requests) {
    const before = up.heads.length;
    await rawRequest(nginx.port, request);
    await rawRequest(gw.port, request);
    strictEqual(up.heads.length, before + 2, what);
    const ours = up.heads[before + 1]!;
    const n = leadingCount(ours);
    deepStrictEqual(shape(ours, n), shape(up.heads[before]!, n), what);
  }
}

Deno.test("proxy_redirect rewrites Location and Refresh as nginx 1.22 does", async (t) => {
  await t.step("locations built by hand", () => redirectsAsNginx("hand"));
  await t.step(
    "the same nginx.conf text compiled",
    () => redirectsAsNginx("text"),
  );
});

async function redirectsAsNginx(how: "hand" | "text"): Promise<void> {
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head !== null) await writeText(conn, reply(head));
  });
  await using nginx = await startNginxServer(confText(up.port));
  await using gw = gatewayFor(how, up.port);
  const seen = (text: string, port: number) =>
    text.split("\r\n\r\n")[0]!.split("\r\n").filter((l) =>
      /^(location|refresh|server|x-up|x-accel-expires):/i.test(l)
    ).map((l) => l.toLowerCase().replace(`:${port}/`, ":PORT/")).sort();
  for (const path of ["/api/redir", "/re/redir", "/raw/redir", "/api/plain"]) {
    const request =
      `GET ${path} HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n`;
    const theirs = seen(await rawRequest(nginx.port, request), nginx.port);
    const ours = seen(await rawRequest(gw.port, request), gw.port);
    deepStrictEqual(
      ours.filter((l) => !l.startsWith("server:")),
      theirs.filter((l) => !l.startsWith("server:")),
      path,
    );
  }
}
