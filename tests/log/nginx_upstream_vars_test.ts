/**
 * `$upstream_addr`, `$upstream_status` and the upstream times beside nginx
 * 1.22: the same nginx.conf server run by nginx and by the gateway (the
 * engine compiled from the same text), the same requests, and the access
 * lines compared with the times' digits masked.
 */

import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { htmlAhead, startNginxSite } from "../_nginx.ts";
import {
  rawRequest,
  refusedPort,
  startGateway,
  startUpstream,
  waitFor,
} from "../_utils.ts";
import { nginxPrefix } from "../_prefix.ts";

const FORMAT = "$request $status|$upstream_addr|$upstream_status|" +
  "$upstream_response_time|$upstream_connect_time|$upstream_header_time";

const TARGETS = [
  "/api/x", // proxied: one try
  "/down/x", // a refused upstream: 502, never connected
  "/index.html", // static: no upstream
  "/two/x", // the first server refuses, the second answers: ", "
  "/redir/x", // 502, then error_page to a named proxied location: " : "
  "/nolive/x", // no live upstreams: the group's name
];

/** The times' digits masked: they differ from run to run. */
function masked(line: string): string {
  return line.replace(/\d+\.\d{3}/g, "T");
}

const PAGES = { "index.html": "<p>app</p>" };
htmlAhead([PAGES]);

Deno.test("$upstream_* variables are written as nginx 1.22 writes them", async () => {
  await using upstream = startUpstream();
  const refused = refusedPort();
  const up = `127.0.0.1:${upstream.port}`;
  const down = `127.0.0.1:${refused}`;
  const http = [
    `log_format up '${FORMAT}';`,
    `upstream two { server ${down}; server ${up}; }`,
    `upstream nl { server ${down} down; }`,
  ];
  const server = (root: string, log: string) => `
    access_log ${log} up;
    location /api/ { proxy_pass http://${up}/; }
    location /down/ { proxy_pass http://${down}/; }
    location /two/ { proxy_pass http://two/; }
    location /redir/ { proxy_pass http://${down}/; error_page 502 = @fallback; }
    location @fallback { proxy_pass http://${up}; }
    location /nolive/ { proxy_pass http://nl/; }
    location / { root ${root}; }`;

  // nginx's root is the gateway's too: written when the file loads.
  await using nginx = await startNginxSite({
    http,
    server: server("$HTML", "$HTML/../nginx.log"),
    files: PAGES,
  });
  for (const target of TARGETS) {
    await rawRequest(
      nginx.port,
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
  }
  const path = join(nginx.root, "..", "nginx.log");
  await waitFor(
    () => Deno.readTextFileSync(path).split("\n").length > TARGETS.length,
    5000,
  );
  const nginxLines = (await Deno.readTextFile(path)).trimEnd().split("\n");

  // The same server for the gateway, from nginx.conf text.
  await using p = await nginxPrefix(
    (dir) =>
      `events {}
http {
  ${http.join("\n  ")}
  server {
    listen 127.0.0.1:${refusedPort()};
    server_name localhost;
    ${server(nginx.root, join(dir, "logs", "access.log"))}
  }
}
`,
    { name: "upstream-vars-", dirs: ["conf", "logs"] },
  );
  const loaded = loadNginxConf(p.conf);
  if (!loaded.ok) throw new Error(loaded.message);
  await using gw = await startGateway({
    upstreamUrl: upstream.origin,
    engine: loaded.engine,
  });
  for (const target of TARGETS) {
    await rawRequest(
      gw.port,
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
  }
  await waitFor(() => gw.accessLines.length === TARGETS.length, 5000);
  deepStrictEqual(gw.accessLines.map(masked), nginxLines.map(masked));
  deepStrictEqual(nginxLines.map(masked), [
    `GET /api/x HTTP/1.1 200|${up}|200|T|T|T`,
    `GET /down/x HTTP/1.1 502|${down}|502|T|-|-`,
    "GET /index.html HTTP/1.1 200|-|-|-|-|-",
    `GET /two/x HTTP/1.1 200|${down}, ${up}|502, 200|T, T|-, T|-, T`,
    `GET /redir/x HTTP/1.1 200|${down} : ${up}|502 : 200|T : T|- : T|- : T`,
    "GET /nolive/x HTTP/1.1 502|nl|502|T|-|-",
  ]);
});
