/**
 * Bytes an upstream sends beyond its answer's framing, side by side with
 * nginx 1.22: a kept connection holding them is never used again (they
 * would be read as the next request's answer), and the warning is nginx's.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { startNginxServer } from "../_nginx.ts";
import { serveCompiled } from "./_location.ts";
import { compileText } from "../engine/_conf.ts";

/** A whole answer a smuggler would want read as the next request's. */
const SMUGGLED = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nSMUGG";
const MORE =
  'upstream sent more data than specified in "Content-Length" header';

/** [case, method, the upstream's answer before the smuggled one, nginx's warning]. */
const CASES: [string, string, string, string | null][] = [
  ["204 No Content", "GET", "HTTP/1.1 204 No Content\r\n\r\n", MORE],
  ["304 Not Modified", "GET", "HTTP/1.1 304 Not Modified\r\n\r\n", MORE],
  [
    "an answer to HEAD",
    "HEAD",
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
    null,
  ],
  [
    "a Content-Length body",
    "GET",
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
    MORE,
  ],
  [
    "a chunked body",
    "GET",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    "upstream sent data after final chunk",
  ],
];

const HTTP = (port: number) =>
  `upstream up { server 127.0.0.1:${port}; keepalive 4; }`;
const SERVER = `location / { proxy_pass http://up; proxy_http_version 1.1; ` +
  `proxy_set_header Connection ""; }`;

/**
 * An upstream answering `/first` with `answer` and every other request with
 * `real`; `heads` holds each request line with the connection it came on.
 */
function upstream(answer: string) {
  return startRawUpstream(async (conn, index, up) => {
    for (let i = 0; i < 4; i++) {
      const head = await readHead(conn);
      if (head === null) return;
      up.heads.push(`${index} ${head.slice(0, head.indexOf(" HTTP/"))}`);
      await writeText(
        conn,
        head.includes(" /first ")
          ? answer
          : "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal",
      );
    }
  });
}

/** The first request, then the body the next one gets. */
async function twoRequests(port: number, method: string): Promise<string> {
  await rawRequest(
    port,
    `${method} /first HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    5000,
  );
  const next = await rawRequest(
    port,
    "GET /next HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    5000,
  );
  return next.slice(next.indexOf("\r\n\r\n") + 4);
}

Deno.test("bytes beyond an answer's framing: the kept connection is dropped, with nginx's warning", async (t) => {
  for (const [name, method, answer, warning] of CASES) {
    await t.step(name, async () => {
      await using upN = upstream(answer + SMUGGLED);
      await using upG = upstream(answer + SMUGGLED);
      await using nginx = await startNginxServer({
        http: HTTP(upN.port),
        server: SERVER,
      });
      await using gw = serveCompiled(
        compileText(
          `http {\n${
            HTTP(upG.port)
          }\n server {\n listen 8081;\n${SERVER}\n }\n}`,
        ),
      );
      strictEqual(await twoRequests(nginx.port, method), "real");
      strictEqual(await twoRequests(gw.port, method), "real");
      // The next request went on a new connection. nginx keeps the one of
      // an answer to HEAD, the bytes it read with the head dropped
      // (ngx_http_upstream_send_response finalizes before reading on); the
      // gateway does not, as bytes after such an answer are the classic
      // desync whichever read they arrive in.
      deepStrictEqual(upN.heads, [
        `0 ${method} /first`,
        `${method === "HEAD" ? 0 : 1} GET /next`,
      ]);
      deepStrictEqual(upG.heads, [`0 ${method} /first`, "1 GET /next"]);
      const nginxWarnings = nginx.errorLines()
        .filter((l) => l.includes("[warn]"))
        .map((l) => l.replace(/^.*\[warn\] \d+#\d+: \*\d+ /, ""))
        .map((l) => l.slice(0, l.indexOf(" while ")));
      deepStrictEqual(nginxWarnings, warning === null ? [] : [warning]);
      deepStrictEqual(
        gw.errors,
        warning === null
          ? []
          : [`warn: ${warning} http://127.0.0.1:${upG.port}/first`],
      );
    });
  }
});
