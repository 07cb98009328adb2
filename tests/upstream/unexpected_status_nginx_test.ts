/**
 * An upstream's 1xx that is no interim answer (a `101` to a request that
 * asked no upgrade, a `099`), with bytes after its head, beside nginx
 * 1.22: nginx relays it as the answer, those bytes as its body, and writes
 * no line; the gateway cannot send such a status (Deno.serve sends no 1xx
 * but a WebSocket's 101) and answers 502 with its one
 * `upstream sent unexpected status` line, no line about the bytes after
 * the head (README, upstream-1xx). Its connection is never kept for
 * another request.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("upstream/unexpected_status_nginx_test.ts", [
  "nginx",
]);

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  upstream kept { server 127.0.0.1:${upstream}; keepalive 4; }
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    location /api/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /kept/ {
      proxy_pass http://kept;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** The upstream's answer, sent in one write before it closes. */
const ANSWERS = [
  "HTTP/1.1 101 Switching Protocols\r\nContent-Length: 5\r\n\r\nhello",
  "HTTP/1.1 101 Switching Protocols\r\n\r\nhello",
  "HTTP/1.1 099 X\r\nContent-Length: 4\r\n\r\nbody",
  "HTTP/1.1 099 X\r\n\r\nbody",
];

Deno.test({
  name:
    "an upstream's 1xx final answer with a body gets the gateway's one unexpected-status line and no line about the body, where nginx 1.22 relays it",
  ...NEEDS,
  async fn() {
    await using up = startRawUpstream(async (conn) => {
      const head = await readHead(conn);
      const row = Number(head?.split(" ")[1]?.split("/").at(-1));
      await writeText(conn, ANSWERS[row] ?? "HTTP/1.1 404 \r\n\r\n");
    });
    await using sides = await bothSides((port) => conf(port, up.port));
    const got: unknown[] = [];
    for (const [i, answer] of ANSWERS.entries()) {
      const row: unknown[] = [answer];
      for (const side of [sides.nginx, sides.gateway]) {
        const before = logLines(side.prefix, "error.log").length;
        const raw = await rawRequest(
          side.port,
          `GET /api/${i} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        );
        row.push(
          raw.slice(9, 12),
          logLines(side.prefix, "error.log").slice(before)
            .filter((l) => l.includes("client: "))
            .map((l) =>
              maskErrorLine(l).replace(/127\.0\.0\.1:\d+/, "127.0.0.1:PORT")
                .replace(/ while .*/, "")
            ),
        );
      }
      got.push(row);
    }
    const line = (status: number) =>
      `TIME [error] PID#TID: *N upstream sent unexpected status ${status}`;
    deepStrictEqual(got, [
      [ANSWERS[0], "101", [], "502", [line(101)]],
      [ANSWERS[1], "101", [], "502", [line(101)]],
      [ANSWERS[2], "099", [], "502", [line(99)]],
      [ANSWERS[3], "099", [], "502", [line(99)]],
    ]);
  },
});

Deno.test({
  name:
    "an upstream connection that answered a 1xx final answer is not kept for the next request",
  ...NEEDS,
  async fn() {
    // Each connection: a 101 with its body still to come for the first
    // request; any request after it on the same connection is answered
    // `reused`, a first request for /kept/ok `fresh`.
    await using up = startRawUpstream(async (conn) => {
      for (let n = 0; n < 2; n++) {
        const head = await readHead(conn);
        if (head === null) return;
        const path = head.split(" ")[1];
        if (n > 0) {
          await writeText(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nreused",
          );
        } else if (path === "/kept/101") {
          await writeText(conn, "HTTP/1.1 101 X\r\nContent-Length: 0\r\n\r\n");
        } else {
          await writeText(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh",
          );
        }
      }
    });
    await using sides = await bothSides((port) => conf(port, up.port));
    const gateway = sides.gateway.port;
    const first = await rawRequest(
      gateway,
      "GET /kept/101 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    const second = await rawRequest(
      gateway,
      "GET /kept/ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    deepStrictEqual(
      [first.slice(9, 12), second.slice(second.indexOf("\r\n\r\n") + 4)],
      ["502", "fresh"],
    );
  },
});
