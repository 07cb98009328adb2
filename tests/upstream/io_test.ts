import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import {
  concat,
  type ConnectionIo,
  readSome,
  writeAll,
  writeRequest,
} from "../../src/upstream/io.ts";
import {
  Connection,
  SCRATCH_SIZE,
  TimerExpired,
} from "../../src/upstream/connection.ts";
import type { UpstreamCall } from "../../src/upstream/types.ts";
import { Watchdog } from "../../src/upstream/watchdog.ts";
import { loopbackPair } from "../_utils.ts";

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

/** Timers long enough never to fire unless a test wants them to. */
function io(timeouts: Partial<ConnectionIo["timeouts"]> = {}): ConnectionIo {
  return {
    watchdog: new Watchdog(),
    timeouts: { connectMs: 5000, sendMs: 5000, readMs: 5000, ...timeouts },
  };
}

/** Reads from the upstream's side until `expected` bytes arrived (5 s at most). */
async function receive(conn: Deno.Conn, expected: number): Promise<string> {
  const buf = new Uint8Array(64 * 1024);
  let text = "";
  const end = Date.now() + 5000;
  while (text.length < expected && Date.now() < end) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += latin1.decode(buf.subarray(0, n));
  }
  return text;
}

Deno.test("concat() joins, and returns the second part when the first is empty", () => {
  const b = new Uint8Array([2, 3]);
  const cases: [Uint8Array, Uint8Array, number[]][] = [
    [new Uint8Array([1]), b, [1, 2, 3]],
    [new Uint8Array(0), b, [2, 3]],
    [new Uint8Array([1]), new Uint8Array(0), [1]],
  ];
  for (const [first, second, expected] of cases) {
    deepStrictEqual([...concat(first, second)], expected);
  }
  strictEqual(concat(new Uint8Array(0), b), b, "no copy");
});

Deno.test("writeRequest() frames each kind of body as RFC 9112 says", async (t) => {
  const big = "b".repeat(SCRATCH_SIZE + 10); // past the reusable buffer
  const stream = (parts: string[]) =>
    new Blob(parts.map((p) => encoder.encode(p))).stream();
  const cases: [string, UpstreamCall["body"], string][] = [
    [
      "none",
      null,
      "GET /a HTTP/1.1\r\nHost: up\r\nx-id: 7\r\n\r\n",
    ],
    [
      "bytes in the reusable buffer",
      { kind: "bytes", bytes: encoder.encode("{}") },
      "GET /a HTTP/1.1\r\nHost: up\r\nContent-Length: 2\r\nx-id: 7\r\n\r\n{}",
    ],
    [
      "bytes past it",
      { kind: "bytes", bytes: encoder.encode(big) },
      `GET /a HTTP/1.1\r\nHost: up\r\nContent-Length: ${big.length}\r\nx-id: 7\r\n\r\n${big}`,
    ],
    [
      "stream with a length",
      { kind: "stream", stream: stream(["ab", "c"]), length: 3 },
      "GET /a HTTP/1.1\r\nHost: up\r\nContent-Length: 3\r\nx-id: 7\r\n\r\nabc",
    ],
    [
      "stream without one: chunked",
      { kind: "stream", stream: stream(["abc"]), length: null },
      "GET /a HTTP/1.1\r\nHost: up\r\nTransfer-Encoding: chunked\r\nx-id: 7\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    ],
  ];
  for (const [name, body, expected] of cases) {
    await t.step(name, async () => {
      await using pair = await loopbackPair();
      const timers = io();
      const c = new Connection(pair.client);
      const received = receive(pair.server, expected.length);
      await writeRequest(timers, c, {
        method: "GET",
        path: "/a",
        host: "up",
        headers: [["x-id", "7"]],
        body,
        signal: new AbortController().signal,
        onBodyError: () => {},
        onBodyWarning: () => {},
      });
      strictEqual(await received, expected);
      strictEqual(c.deadline, 0, "no timer left armed");
      timers.watchdog.stop();
    });
  }
});

Deno.test("writeAll() writes every byte of a body larger than the socket buffers", async () => {
  await using pair = await loopbackPair();
  const timers = io();
  const bytes = new Uint8Array(4 * 1024 * 1024).fill(120);
  const received = receive(pair.server, bytes.length);
  await writeAll(timers, new Connection(pair.client), bytes);
  strictEqual((await received).length, bytes.length);
  timers.watchdog.stop();
});

Deno.test("readSome() reads into the scratch buffer unless asked for a fresh one", async () => {
  await using pair = await loopbackPair();
  const timers = io();
  const c = new Connection(pair.client);
  for (const fresh of [false, true]) {
    await pair.server.write(encoder.encode("hi"));
    const got = await readSome(timers, c, fresh);
    strictEqual(latin1.decode(got!), "hi");
    strictEqual(got!.buffer === c.scratch.buffer, !fresh);
  }
  pair.server.close();
  strictEqual(await readSome(timers, c), null, "end of stream");
  timers.watchdog.stop();
});

Deno.test("readSome() reports TimerExpired when the read timer fires first", async () => {
  await using pair = await loopbackPair();
  const timers = io({ readMs: 100 });
  const c = new Connection(pair.client);
  const started = Date.now();
  await rejects(readSome(timers, c), TimerExpired);
  const waited = Date.now() - started;
  strictEqual(waited >= 100 && waited < 3000, true, `waited ${waited} ms`);
  strictEqual(c.closed, true, "the watchdog closed the connection");
  timers.watchdog.stop();
});

Deno.test("readSome() takes over the read that started while the connection idled", async () => {
  await using pair = await loopbackPair();
  const timers = io();
  const c = new Connection(pair.client);
  c.idleBuf = new Uint8Array(64);
  c.idleRead = pair.client.read(c.idleBuf);
  await pair.server.write(encoder.encode("early"));
  const got = await readSome(timers, c);
  strictEqual(latin1.decode(got!), "early");
  strictEqual(c.idleRead, null);
  strictEqual(c.idleBuf, null);
  timers.watchdog.stop();
});
