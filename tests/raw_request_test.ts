/**
 * The test helper `rawRequest()`: it returns when a response says
 * `Connection: close`, not when a timer gives up on a socket Deno.serve
 * keeps open (denoland/deno#9411).
 */
import { strictEqual } from "node:assert/strict";
import { closedResponseEnd, rawRequest, startRawUpstream } from "./_utils.ts";

const enc = (t: string) => new TextEncoder().encode(t);
const CLOSE_400 =
  "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbad\n";

Deno.test("closedResponseEnd() finds the end of a response that says close, by its framing", () => {
  const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  const chunked =
    "HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  const head =
    "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 150\r\n\r\n";
  const cases: [string, string, boolean[], number | null][] = [
    ["one 400 with close", CLOSE_400, [false], CLOSE_400.length],
    [
      "a keep-alive response first",
      ok + CLOSE_400,
      [false, false],
      ok.length + CLOSE_400.length,
    ],
    ["body not complete", CLOSE_400.slice(0, -1), [false], null],
    ["head not complete", CLOSE_400.slice(0, 20), [false], null],
    ["keep-alive only", ok, [false], null],
    ["chunked", chunked, [false], chunked.length],
    ["chunked, no last chunk", chunked.slice(0, -5), [false], null],
    ["HEAD: no body", head, [true], head.length],
    [
      "100 Continue first",
      "HTTP/1.1 100 Continue\r\n\r\n" + CLOSE_400,
      [false],
      25 + CLOSE_400.length,
    ],
    [
      "no length: ends at the close",
      "HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nabc",
      [false],
      null,
    ],
    [
      "multi-byte body",
      "HTTP/1.1 400 x\r\nConnection: close\r\nContent-Length: 2\r\n\r\né",
      [false],
      58,
    ],
    ["not HTTP", "SSH-2.0\r\n\r\n", [false], null],
  ];
  for (const [name, text, heads, end] of cases) {
    strictEqual(closedResponseEnd(enc(text), heads), end, name);
  }
});

Deno.test("rawRequest() returns after a response that says close, while the server keeps the socket open", async () => {
  // The server holds the connection until the client closes it; a bound of
  // 30 s ends it otherwise, and is then recorded: a reader that waits for
  // the server's close would only return then.
  let forced = false;
  await using server = startRawUpstream(async (conn) => {
    const buf = new Uint8Array(1024);
    await conn.read(buf);
    await conn.write(enc(CLOSE_400));
    const guard = setTimeout(() => {
      forced = true;
      conn.close();
    }, 30_000);
    await conn.read(buf).catch(() => null);
    clearTimeout(guard);
  });
  const res = await rawRequest(
    server.port,
    "GET /%00 HTTP/1.1\r\nHost: a\r\n\r\n",
    60_000,
  );
  strictEqual(res, CLOSE_400);
  strictEqual(forced, false);
});
