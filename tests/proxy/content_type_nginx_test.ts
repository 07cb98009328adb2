/**
 * An upstream's head with `Content-Type` more than once, through
 * `proxy_pass`, beside nginx 1.22: each line replaces the one before
 * (ngx_http_upstream_copy_content_type), so the client gets the last.
 * (`fastcgi_nginx_test.ts` has the same for a FastCGI head: both are read
 * by the one field-line parser.)
 */
import { deepStrictEqual } from "node:assert/strict";
import { readHead, startRawUpstream, writeText } from "../_utils.ts";
import { request } from "../response/_raw_exchange.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("proxy/content_type_nginx_test.ts", ["nginx"]);

/** The upstream's Content-Type lines, by the request's path. */
const HEADS: Record<string, string[]> = {
  "/two": ["Content-Type: text/html", "Content-Type: text/plain"],
  "/three": [
    "content-type: text/html",
    "X-Between: 1",
    "Content-Type: image/png",
    "CONTENT-TYPE: text/plain; charset=utf-8",
  ],
  "/one": ["Content-Type: text/css"],
};

Deno.test(
  "proxy_pass: an upstream's repeated Content-Type reaches the client as its last line, as nginx 1.22",
  NEEDS,
  async (t) => {
    await using up = startRawUpstream(async (conn) => {
      const head = await readHead(conn);
      const path = head?.split(" ")[1] ?? "";
      const lines = HEADS[path] ?? [];
      await writeText(
        conn,
        `HTTP/1.1 200 OK\r\n${
          lines.map((l) => `${l}\r\n`).join("")
        }Content-Length: 4\r\nConnection: close\r\n\r\nbody`,
      );
    });
    await using both = await bothSides((port) =>
      `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://127.0.0.1:${up.port}; }
  }
}
`
    );
    for (const path of Object.keys(HEADS)) {
      await t.step(path, async () => {
        const seen = [];
        for (const side of [both.nginx, both.gateway]) {
          const read = await request(
            side.port,
            `GET ${path} HTTP/1.1\r\nHost: localhost`,
          );
          seen.push({
            status: read.status,
            fields: read.fields.filter((f) => /^(content-type|x-)/.test(f)),
            body: read.body,
          });
        }
        deepStrictEqual(seen[1], seen[0]);
      });
    }
  },
);
