/**
 * An upstream's 205 Reset Content with a body, beside nginx 1.22: nginx
 * relays it whole; the runtime sends no body with a 205, so the gateway
 * relays the status and fields without it (README, reset-content).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { startNginxServer } from "../_nginx.ts";
import { serveCompiled } from "./_location.ts";
import { compileText } from "../engine/_conf.ts";

/** [case, the upstream's answer] */
const CASES: [string, string][] = [
  [
    "a Content-Length body",
    "HTTP/1.1 205 Reset Content\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello",
  ],
  [
    "a chunked body",
    "HTTP/1.1 205 Reset Content\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n" +
    "5\r\nhello\r\n0\r\n\r\n",
  ],
  [
    "a body to the close",
    "HTTP/1.1 205 Reset Content\r\nX-A: 1\r\nConnection: close\r\n\r\nhello",
  ],
  [
    "no body",
    "HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\nX-A: 1\r\n\r\n",
  ],
];

/** The status line's code, the X-A field and the body, one response. */
function shape(raw: string): { status: string; xa: boolean; body: string } {
  const end = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, end);
  return {
    status: head.split(" ")[1]!,
    xa: /\r\nx-a: 1\r\n/i.test(`${head}\r\n`),
    body: raw.slice(end + 4),
  };
}

Deno.test("an upstream's 205 with a body is relayed as a 205, its fields kept", async (t) => {
  for (const [name, answer] of CASES) {
    await t.step(name, async () => {
      await using up = startRawUpstream(async (conn) => {
        if (await readHead(conn) !== null) await writeText(conn, answer);
      });
      const server = `location / { proxy_pass http://127.0.0.1:${up.port}; }`;
      await using nginx = await startNginxServer({ server });
      await using gw = serveCompiled(
        compileText(`http {\n server {\n listen 8081;\n${server}\n }\n}`),
      );
      const request = "GET /r HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
      const theirs = shape(await rawRequest(nginx.port, request, 5000));
      const ours = shape(await rawRequest(gw.port, request, 5000));
      deepStrictEqual(
        { status: theirs.status, xa: theirs.xa },
        { status: "205", xa: true },
      );
      // The one difference: the body nginx relays (its own framing).
      deepStrictEqual(ours, { status: "205", xa: true, body: "" });
      deepStrictEqual(gw.errors, []);
    });
  }
});
