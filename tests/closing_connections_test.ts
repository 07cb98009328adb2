/**
 * Nothing behind a response that said `Connection: close` is served: a
 * request pipelined behind a malformed one never reaches the upstream, and
 * the connection ends (nginx closes it after its own 400; Deno.serve keeps
 * it open, denoland/deno#9411).
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { parseUpstreamServer } from "../src/config/addresses.ts";
import { ConnectionCounter } from "../src/log/connection_counter.ts";
import { createLogger } from "../src/log/logger.ts";
import { createGatewayHandler } from "../src/gateway.ts";
import { serveErrorHandler } from "../src/server/lifecycle.ts";
import {
  ClosingConnections,
  connectionKey,
} from "../src/closing_connections.ts";
import { startGateway, startUpstream, testConfig, waitFor } from "./_utils.ts";

/** A valid request, the one an attacker smuggles behind a malformed one. */
const SMUGGLED = "GET /api/smuggled HTTP/1.1\r\nHost: a\r\n\r\n";

/**
 * Writes `text` in one write and reads until the server closes, or the
 * upstream sees a request (the defect: then the test fails at once), or
 * 10 s pass (a bound, not a budget).
 */
async function pipelined(
  port: number,
  text: string,
  forwarded: () => boolean,
): Promise<{ text: string; closed: boolean }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const chunks: string[] = [];
  let closed = false;
  const deadline = setTimeout(() => conn.close(), 10_000);
  // The upstream's count is polled beside the read: a forwarded request
  // ends the wait as soon as it is seen.
  const poll = setInterval(() => {
    if (forwarded()) conn.close();
  }, 5);
  try {
    await conn.write(new TextEncoder().encode(text));
    const buf = new Uint8Array(16 * 1024);
    for (let i = 0; i < 1000; i++) {
      const n = await conn.read(buf);
      if (n === null) {
        closed = true;
        conn.close();
        break;
      }
      chunks.push(new TextDecoder("latin1").decode(buf.subarray(0, n)));
    }
  } catch {
    // closed by the deadline or the poll
  } finally {
    clearTimeout(deadline);
    clearInterval(poll);
  }
  return { text: chunks.join(""), closed };
}

/** Each way the gateway answers a request itself with `close`. */
const MALFORMED: [string, string, RegExp][] = [
  [
    "a bad escape",
    "GET /api/%zz HTTP/1.1\r\nHost: a\r\n\r\n",
    /^HTTP\/1\.1 400 /,
  ],
  [
    "a NUL in the path",
    "GET /api/%00 HTTP/1.1\r\nHost: a\r\n\r\n",
    /^HTTP\/1\.1 400 /,
  ],
  ["no Host in HTTP/1.1", "GET /api/x HTTP/1.1\r\n\r\n", /^HTTP\/1\.1 400 /],
  [
    "an invalid Host",
    "GET /api/x HTTP/1.1\r\nHost: a/b\r\n\r\n",
    /^HTTP\/1\.1 400 /,
  ],
  [
    "a CONNECT line",
    "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n",
    /^HTTP\/1\.1 400 /,
  ],
  [
    "a URI past large_client_header_buffers",
    `GET /api/${"a".repeat(9000)} HTTP/1.1\r\nHost: a\r\n\r\n`,
    /^HTTP\/1\.1 414 /,
  ],
  [
    "a HEAD with a bad escape",
    "HEAD /api/%zz HTTP/1.1\r\nHost: a\r\n\r\n",
    /^HTTP\/1\.1 400 /,
  ],
];

for (const [name, malformed, status] of MALFORMED) {
  Deno.test(`the gateway serves nothing behind its own answer to ${name}`, async () => {
    await using upstream = startUpstream();
    await using gateway = await startGateway({ upstreamUrl: upstream.origin });
    const got = await pipelined(
      gateway.port,
      malformed + SMUGGLED,
      () => upstream.seen.length > 0,
    );
    deepStrictEqual(upstream.seen.map((r) => r.target), []);
    strictEqual(got.closed, true);
    match(got.text, status);
    // What follows the gateway's answer is at most a 400 head: the cut.
    const rest = got.text.split(/\r\n\r\n/).slice(1).join("\r\n\r\n");
    for (const m of rest.matchAll(/HTTP\/1\.1 (\d{3})/g)) {
      strictEqual(m[1], "400");
    }
    // Only the malformed request is logged, as nginx logs it (the line is
    // written once its response is sent).
    await waitFor(() => gateway.accessLines.length > 0);
    strictEqual(gateway.accessLines.length, 1);
  });
}

Deno.test("the gateway answers a HEAD behind its 400 with a 400 head and cuts the next request", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ upstreamUrl: upstream.origin });
  const got = await pipelined(
    gateway.port,
    "GET /api/%zz HTTP/1.1\r\nHost: a\r\n\r\n" +
      "HEAD /api/x HTTP/1.1\r\nHost: a\r\n\r\n" + SMUGGLED,
    () => upstream.seen.length > 0,
  );
  deepStrictEqual(upstream.seen.map((r) => r.target), []);
  strictEqual(got.closed, true);
  deepStrictEqual(
    [...got.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]),
    ["400", "400", "400"],
  );
});

Deno.test("the gateway keeps a connection after a valid request and serves what follows", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ upstreamUrl: upstream.origin });
  const got = await pipelined(
    gateway.port,
    "GET /api/one HTTP/1.1\r\nHost: a\r\n\r\n" +
      "GET /api/two HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    () => false,
  );
  deepStrictEqual(upstream.seen.map((r) => r.target), ["/one", "/two"]);
  strictEqual(got.closed, true);
});

Deno.test("the gateway cuts its own 400 when the table is full, so nothing behind it is served", async () => {
  await using upstream = startUpstream();
  const lines: string[] = [];
  const logger = createLogger({
    errorLog: { write: (l: string) => lines.push(l) },
    accessLog: null,
  });
  const handler = createGatewayHandler(
    testConfig({ upstreams: [parseUpstreamServer(upstream.origin)] }),
    { port: 0, version: "test" },
    {
      logger,
      counter: new ConnectionCounter(),
      closing: new ClosingConnections({ maxEntries: 0 }),
    },
  );
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
    onError: serveErrorHandler(logger),
  }, handler);
  try {
    const got = await pipelined(
      server.addr.port,
      "GET /api/%zz HTTP/1.1\r\nHost: a\r\n\r\n" + SMUGGLED,
      () => upstream.seen.length > 0,
    );
    deepStrictEqual(upstream.seen.map((r) => r.target), []);
    strictEqual(got.closed, true);
    match(got.text, /^HTTP\/1\.1 400 Bad Request\r\n/);
    match(got.text, /<h1>400 Bad Request<\/h1>/);
    // The cut is the gateway's own doing: no [alert].
    deepStrictEqual(lines.filter((l) => l.includes("[alert]")), []);
  } finally {
    handler.close();
    await server.shutdown();
  }
});

Deno.test("ClosingConnections is bounded, forgets after its lifetime, and never evicts unless forced", () => {
  let now = 0;
  const closing = new ClosingConnections({
    maxEntries: 2,
    ttlMs: 100,
    now: () => now,
  });
  const a = connectionKey({ hostname: "127.0.0.1", port: 1 }, 80);
  const b = connectionKey({ hostname: "127.0.0.1", port: 2 }, 80);
  const c = connectionKey({ hostname: "127.0.0.1", port: 3 }, 80);
  const cases: [string, () => unknown, unknown][] = [
    ["mark a", () => closing.mark(a), true],
    ["mark b", () => closing.mark(b), true],
    ["full: c refused", () => closing.mark(c), false],
    ["a kept", () => closing.has(a), true],
    [
      "another local port is another connection",
      () => closing.has(connectionKey({ hostname: "127.0.0.1", port: 1 }, 81)),
      false,
    ],
    ["forget a", () => closing.forget(a), undefined],
    ["c fits", () => closing.mark(c), true],
    ["after the lifetime", () => {
      now = 100;
      return closing.has(b);
    }, false],
    ["expired entries make room", () => closing.mark(a), true],
    ["size", () => closing.size, 1],
  ];
  for (const [what, step, expected] of cases) {
    strictEqual(step(), expected, what);
  }
});
