/**
 * `Expect: 100-continue` on a body refused from its declared length (past
 * `client_max_body_size`), beside nginx 1.22 (README, continue-first):
 * nginx answers 413 alone, as it sends `100 Continue` only when it starts
 * to read a body (ngx_http_test_expect); Deno.serve sends `100 Continue`
 * as soon as it has read the head, before the handler runs, so the
 * gateway's 413 follows one. Held here so a Deno release that stops doing
 * so shows.
 */
import { deepStrictEqual } from "node:assert/strict";
import { rawRequest } from "../_utils.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("request/expect_continue_nginx_test.ts", ["nginx"]);

function conf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /small/ { client_max_body_size 10; return 200 "x"; }
  }
}
`;
}

/** The status lines of a raw answer, interim ones included. */
function statuses(raw: string): string[] {
  return [...raw.matchAll(/(?:^|\r\n)(HTTP\/1\.1 \d{3})/g)].map((m) => m[1]!);
}

Deno.test({
  name:
    "Expect: 100-continue with a length past client_max_body_size: nginx 1.22 answers 413 alone, Deno.serve has sent 100 Continue first",
  ...NEEDS,
  async fn() {
    await using sides = await bothSides(conf);
    const request =
      "POST /small/ HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n";
    deepStrictEqual(
      {
        nginx: statuses(await rawRequest(sides.nginx.port, request)),
        gateway: statuses(await rawRequest(sides.gateway.port, request)),
      },
      {
        nginx: ["HTTP/1.1 413"],
        gateway: ["HTTP/1.1 100", "HTTP/1.1 413"],
      },
    );
  },
});
