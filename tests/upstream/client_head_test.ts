/**
 * A response head that reaches the upstream client a few bytes per read,
 * interim heads before it: the client searches each byte once and grows
 * one buffer (src/upstream/client.ts), so every split gives the same
 * reply.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { readHead, startRawUpstream } from "../_utils.ts";

const ANSWER = "HTTP/1.1 100 Continue\r\n\r\n" +
  "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" +
  `HTTP/1.1 200 OK\r\n${"X-Pad: 0123456789\r\n".repeat(40)}` +
  "Content-Length: 2\r\n\r\nok";

Deno.test("the upstream client reads a head split into pieces of any size", async () => {
  for (const step of [1, 3, 7, 64]) {
    await using up = startRawUpstream(async (conn) => {
      if (await readHead(conn) === null) return;
      (conn as Deno.TcpConn).setNoDelay(true);
      const bytes = new TextEncoder().encode(ANSWER);
      // Each piece is written once the client has read the last: the
      // client sees the pieces one read at a time (bounded by its size).
      for (let i = 0; i < bytes.length; i += step) {
        await conn.write(bytes.subarray(i, i + step));
      }
    });
    const client = new UpstreamClient({
      hostname: "127.0.0.1",
      port: up.port,
      timeouts: { connectMs: 5000, sendMs: 5000, readMs: 5000 },
    });
    try {
      const reply = await client.send({
        method: "GET",
        path: "/",
        host: "x",
        headers: [],
        body: null,
        signal: new AbortController().signal,
        onBodyError() {},
        onBodyWarning() {},
      });
      strictEqual(reply.head.status, 200, `step ${step}`);
      strictEqual(reply.head.fields.length, 41);
      deepStrictEqual(reply.head.fields.at(-1), ["Content-Length", "2"]);
      let body = "";
      if (reply.body instanceof Uint8Array) {
        body = new TextDecoder().decode(reply.body);
      } else if (reply.body !== null) {
        body = await new Response(reply.body).text();
      }
      strictEqual(body, "ok", `step ${step}`);
    } finally {
      client.close();
    }
  }
});
