/**
 * Every size an nginx.conf sets for memory a peer fills is bounded at load:
 * past the bound it is one refusal naming it, at the bound it is taken.
 */
import { strictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { memoryIo } from "./_memory_io.ts";

const MAIN = "/n/conf/nginx.conf";

function load(http: string, location: string) {
  const text = `events {}\nhttp {\n${http}\n server {\n listen 80;\n` +
    ` location /api/ {\n proxy_pass http://10.0.0.5:8080/;\n${location}\n }\n }\n}\n`;
  return loadNginxConf(MAIN, memoryIo({ [MAIN]: text }));
}

/** [http lines, location lines, the refusal or `null` when taken]. */
const CASES: [string, string, string | null][] = [
  ["", "proxy_buffer_size 1m;", null],
  ["", "proxy_buffer_size 1024k;", null],
  [
    "",
    "proxy_buffer_size 1025k;",
    '"proxy_buffer_size 1025k" is not supported: the gateway takes a size up to 1m (a buffer a peer fills, memory bounded per request) in /n/conf/nginx.conf:8',
  ],
  [
    "proxy_buffer_size 2g;",
    "",
    '"proxy_buffer_size 2g" is not supported: the gateway takes a size up to 1m (a buffer a peer fills, memory bounded per request) in /n/conf/nginx.conf:3',
  ],
  ["upstream b { server 10.0.0.5:8080; keepalive 1024; }", "", null],
  [
    "upstream b { server 10.0.0.5:8080; keepalive 1025; }",
    "",
    '"keepalive 1025" is not supported: the gateway keeps up to 1024 idle connections (memory is bounded) in /n/conf/nginx.conf:3',
  ],
  // A limit, not a buffer: a body past client_body_buffer_size goes to a file.
  ["", "client_max_body_size 10g;", null],
  ["limit_req_zone $binary_remote_addr zone=a:64m rate=1r/s;", "", null],
  [
    "limit_req_zone $binary_remote_addr zone=a:65m rate=1r/s;",
    "",
    '"zone=a:65m" is not supported: the gateway takes a zone up to 64m (clients fill it, memory is bounded) in /n/conf/nginx.conf:3',
  ],
  [
    "limit_conn_zone $binary_remote_addr zone=c:1000m;",
    "",
    '"zone=c:1000m" is not supported: the gateway takes a zone up to 64m (clients fill it, memory is bounded) in /n/conf/nginx.conf:3',
  ],
];

Deno.test("loadNginxConf() bounds the sizes of memory a peer fills", async (t) => {
  for (const [http, location, refusal] of CASES) {
    await t.step(`${http}${location}`, () => {
      const result = load(http, location);
      strictEqual(
        result.ok
          ? null
          : result.message.split("\n").find((l) =>
            l.includes("not supported")
          ) ?? result.message,
        refusal,
      );
    });
  }
});
