/**
 * A proxied HEAD's framing fields beside nginx 1.22: an upstream's answer
 * without a length (chunked, or to the close) reaches the client with no
 * `Content-Length` and no `Transfer-Encoding` (nginx's header filter has
 * no length to write, and a header-only answer is not chunked); one with a
 * length keeps it.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("proxy/head_length_nginx_test.ts", ["nginx"]);

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    location /api/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /gz/ {
      proxy_pass http://127.0.0.1:${upstream};
      gzip on;
      gzip_min_length 1;
      gzip_types text/plain;
    }
  }
}
`;
}

/** The upstream's head for each row (a HEAD's answer: no body). */
const ANSWERS = [
  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n",
  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\n",
  "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n",
  "HTTP/1.1 204 No Content\r\n\r\n",
];

/** The status and the framing fields of a raw answer. */
function framing(raw: string): string[] {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).split("\r\n");
  return [
    // The code only: nginx answers HTTP/1.0 in HTTP/1.1, Deno.serve in 1.0.
    head[0]!.slice(9, 12),
    ...head.slice(1).map((l) => l.toLowerCase()).filter((l) =>
      /^(content-length|transfer-encoding|content-encoding):/.test(l)
    ),
  ];
}

Deno.test({
  name:
    "a proxied HEAD answered without a length gets no Content-Length and no Transfer-Encoding, as nginx 1.22's",
  ...NEEDS,
  async fn() {
    await using up = startRawUpstream(async (conn) => {
      const head = await readHead(conn);
      const row = Number(head?.split(" ")[1]?.split("/").at(-1));
      await writeText(conn, ANSWERS[row] ?? "HTTP/1.1 500 \r\n\r\n");
    });
    await using sides = await bothSides((port) => conf(port, up.port));
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (const location of ["api", "gz"]) {
      for (const version of ["1.1", "1.0"]) {
        for (const [i, answer] of ANSWERS.entries()) {
          const request =
            `HEAD /${location}/${i} HTTP/${version}\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
          const row = `${location} HTTP/${version} ${answer.split("\r\n")[0]}`;
          got.push([
            row,
            ...framing(await rawRequest(sides.gateway.port, request)),
          ]);
          want.push([
            row,
            ...framing(await rawRequest(sides.nginx.port, request)),
          ]);
        }
      }
    }
    deepStrictEqual(got, want);
  },
});
