/**
 * Requests refused before routing, sent to nginx 1.22 and to the gateway
 * running the same nginx.conf: each is written to the access logs nginx
 * writes it to (the default server's, every one in its own format and
 * with its `if=`; the `Host` field's server's once the whole head is
 * read) and to no other, and its error line to the same server's
 * error log.
 */
import { deepStrictEqual } from "node:assert/strict";
import { maskErrorLine, rawRequest, waitFor } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number): string {
  return `${PROCESS}error_log logs/main.log notice;
events {}
http {
${TEMP}
  log_format short '$status|$request|$http_x_log|$remote_user';
  access_log logs/http.log;
  large_client_header_buffers 4 1k;
  server {
    listen 127.0.0.1:${port};
    error_log logs/a-error.log info;
    access_log logs/a1.log;
    access_log logs/a2.log short;
    access_log logs/a3.log short if=$http_x_log;
    return 204;
  }
  server {
    listen 127.0.0.1:${port};
    server_name b.test;
    error_log logs/b-error.log info;
    access_log logs/b.log short;
    return 204;
  }
}
`;
}

/** Fields after the request line: a user, the `if=` field, the server's name. */
const FIELDS = `Authorization: Basic ${
  btoa("st:pw")
}\r\nX-Log: 1\r\nUser-Agent: ua\r\nReferer: http://r/\r\n`;

/** [what it is, the request] */
const REQUESTS: [string, string][] = [
  ["invalid method", `get / HTTP/1.1\r\nHost: b.test\r\n${FIELDS}\r\n`],
  ["invalid target", `GET /%00 HTTP/1.1\r\nHost: b.test\r\n${FIELDS}\r\n`],
  ["URI too long", `GET /${"a".repeat(1100)} HTTP/1.1\r\n${FIELDS}\r\n`],
  ["no Host", `GET /x HTTP/1.1\r\n${FIELDS}\r\n`],
  ["invalid Host", `GET /x HTTP/1.1\r\n${FIELDS}Host: a/b\r\n\r\n`],
  ["TRACE", `TRACE /x HTTP/1.1\r\nHost: b.test\r\n${FIELDS}\r\n`],
  [
    "invalid Content-Length",
    `POST /x HTTP/1.1\r\nHost: b.test\r\n${FIELDS}Content-Length: 9223372036854775808\r\n\r\n`,
  ],
  [
    "unknown Transfer-Encoding",
    `POST /x HTTP/1.1\r\nHost: b.test\r\n${FIELDS}Transfer-Encoding: gzip, chunked\r\n\r\n`,
  ],
  // Served: the Host field's server, as a control.
  ["served", `GET /x HTTP/1.1\r\nHost: b.test\r\n${FIELDS}\r\n`],
];

const FILES = [
  "http.log",
  "a1.log",
  "a2.log",
  "a3.log",
  "b.log",
  "a-error.log",
  "b-error.log",
];

/**
 * Each file's lines: time, pid and `*N` masked; the body bytes of
 * `combined` too (the built-in error pages differ by design, README
 * error-page).
 */
function linesOf(prefix: string): Record<string, string[]> {
  return Object.fromEntries(FILES.map((name) => [
    name,
    // Error lines about a request only (start-up lines differ by design).
    logLines(prefix, name).filter((l) =>
      !name.endsWith("error.log") || l.includes(", client: ")
    ).map(
      (l) =>
        maskErrorLine(l).replace(/\[\d\d\/\w{3}\/[^\]]+\]/, "[TIME]")
          .replace(/" (\d{3}) \d+ "/, '" $1 BYTES "'),
    ),
  ]));
}

Deno.test("a request refused before routing is written to the access logs nginx 1.22 writes it to, each in its format and with its if=", async () => {
  await using both = await bothSides(conf);
  const { nginx: theirs, gateway: ours } = both;
  for (const [, request] of REQUESTS) {
    await rawRequest(theirs.port, request);
    await rawRequest(ours.port, request);
  }
  for (const side of [theirs, ours]) {
    // The last request's line is written last.
    await waitFor(() => logLines(side.prefix, "b.log").length === 4);
    await waitFor(() => logLines(side.prefix, "a1.log").length === 5);
  }
  const theirLines = linesOf(theirs.prefix);
  deepStrictEqual(theirLines["b.log"], [
    "405|TRACE /x HTTP/1.1|1|st",
    "400|POST /x HTTP/1.1|1|st",
    "501|POST /x HTTP/1.1|1|st",
    "204|GET /x HTTP/1.1|1|st",
  ]);
  deepStrictEqual(theirLines["a3.log"]?.length, 2);
  deepStrictEqual(linesOf(ours.prefix), theirLines);
});
