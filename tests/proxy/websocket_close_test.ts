/**
 * What the upstream gets when the browser's side ends, over real sockets:
 * the close frame, and the end of its connection however the client went.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  readHead,
  startGateway,
  startRawUpstream,
  untilClosed,
  waitFor,
  writeText,
} from "../_utils.ts";
import { sendableCloseCode } from "../../src/proxy/websocket_close.ts";
import { OPCODE } from "../../src/proxy/websocket_frame_types.ts";
import { encodeFrame } from "../../src/proxy/websocket_frames.ts";
import { bridge } from "../../src/proxy/websocket_tunnel.ts";
import type { UpstreamReply } from "../../src/upstream/mod.ts";

/** Answers the handshake, then reads frames until a close frame; its code. */
function startClosingUpstream(seen: (number | null)[]) {
  return startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const key = /sec-websocket-key: *(\S+)/i.exec(head)![1]!;
    const digest = await crypto.subtle.digest(
      "SHA-1",
      new TextEncoder().encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
    );
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await writeText(
      conn,
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
        `Connection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    // Frames from the gateway are masked and small here: one read each.
    const buf = new Uint8Array(1024);
    for (let i = 0; i < 20; i++) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return;
      if ((buf[0]! & 0x0f) !== 0x8) continue;
      const length = buf[1]! & 0x7f;
      const mask = buf.subarray(2, 6);
      const payload = buf.slice(6, 6 + length).map((b, j) => b ^ mask[j % 4]!);
      seen.push(length >= 2 ? (payload[0]! << 8) | payload[1]! : null);
      return;
    }
  });
}

Deno.test("tunnel: a browser that drops its connection makes the upstream get close 1001, never code 0", async () => {
  const seen: (number | null)[] = [];
  await using up = startClosingUpstream(seen);
  await using gw = await startGateway({ upstreamUrl: up.origin });
  const client = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
  await writeText(
    client,
    "GET /api/ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n" +
      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
      "Sec-WebSocket-Version: 13\r\n\r\n",
  );
  match((await readHead(client))!, /^HTTP\/1\.1 101 /);
  // The browser's tab is gone: no close frame, the TCP connection ends.
  client.close();
  await waitFor(() => seen.length === 1, 5000);
  deepStrictEqual(seen, [1001]);
});

Deno.test("sendableCloseCode() sends only codes a close frame may carry (RFC 6455 §7.4)", () => {
  const cases: [number | undefined, number | undefined][] = [
    [1000, 1000],
    [1001, 1001],
    [1003, 1003],
    [1007, 1007],
    [1011, 1011],
    [1014, 1014],
    [3000, 3000],
    [4999, 4999],
    // No status received: a close frame without a code.
    [undefined, undefined],
    [1005, undefined],
    // Never on the wire (§7.4.1) or not a code at all: going away.
    [0, 1001],
    [1004, 1001],
    [1006, 1001],
    [1015, 1001],
    [1016, 1001],
    [2999, 1001],
    [5000, 1001],
    [999, 1001],
  ];
  for (const [code, expected] of cases) {
    strictEqual(sendableCloseCode(code), expected, String(code));
  }
});

const HANDSHAKE = "GET /api/hub HTTP/1.1\r\nHost: localhost\r\n" +
  "Upgrade: websocket\r\nConnection: Upgrade\r\n" +
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/**
 * Settles with `promise`, or fails after `ms`: a bound for an event that
 * never comes, never a time anything should take.
 */
async function within<T>(promise: PromiseLike<T>, ms: number, what: string) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: not within ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** How the browser's side goes away, after its handshake was sent. */
type Vanish =
  | "before the upstream's 101"
  | "right after the 101"
  | "mid-message"
  | "after a close frame"
  | "never: the gateway stops";

Deno.test("tunnel: the upstream's connection ends however the browser's side went, pings from the upstream notwithstanding", async (t) => {
  const cases: Vanish[] = [
    "before the upstream's 101",
    "right after the 101",
    "mid-message",
    "after a close frame",
    "never: the gateway stops",
  ];
  for (const vanish of cases) {
    await t.step(vanish, async () => {
      const requested = Promise.withResolvers<void>();
      const clientGone = Promise.withResolvers<void>();
      const upstreamClosed = Promise.withResolvers<void>();
      // A station upstream as Deno serves one, pinging an idle socket every
      // second: each ping used to re-arm the tunnel's idle timer.
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        async (req) => {
          requested.resolve();
          if (vanish === "before the upstream's 101") await clientGone.promise;
          const { socket, response } = Deno.upgradeWebSocket(req, {
            idleTimeout: 1,
          });
          socket.onclose = () => upstreamClosed.resolve();
          return response;
        },
      );
      let client: Deno.TcpConn | null = null;
      try {
        const gw = await startGateway({
          upstreamUrl: `http://127.0.0.1:${server.addr.port}`,
          // Longer than every bound below: only the client's going ends it.
          timeouts: { readMs: 60_000 },
        });
        let stopped = false;
        try {
          client = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
          await writeText(client, HANDSHAKE);
          if (vanish === "before the upstream's 101") {
            await requested.promise;
          } else {
            match((await readHead(client))!, /^HTTP\/1\.1 101 /);
          }
          const mask = new Uint8Array([1, 2, 3, 4]);
          if (vanish === "mid-message") {
            const text = new TextEncoder().encode("half a message");
            await client.write(
              encodeFrame(OPCODE.text, text, mask).subarray(0, 9),
            );
          } else if (vanish === "after a close frame") {
            await client.write(
              encodeFrame(OPCODE.close, new Uint8Array([0x03, 0xe8]), mask),
            );
          }
          if (vanish === "never: the gateway stops") {
            stopped = true;
            await within(gw[Symbol.asyncDispose](), 10_000, "gateway's stop");
          } else {
            client.close();
            client = null;
            clientGone.resolve();
          }
          await within(upstreamClosed.promise, 10_000, "upstream's close");
          if (vanish === "before the upstream's 101") {
            // Logged as any request whose client left (499), never upgraded.
            await waitFor(() => gw.errorLines.length > 0);
            match(
              gw.errorLines[0]!,
              /\[info\] .* client prematurely closed connection, so upstream connection is closed too while /,
            );
          }
        } finally {
          if (!stopped) {
            await within(gw[Symbol.asyncDispose](), 10_000, "gateway's stop");
          }
        }
      } finally {
        clientGone.resolve();
        client?.close();
        await server.shutdown();
      }
    });
  }
});

Deno.test("tunnel: a browser's side that never opens ends the tunnel after proxy_read_timeout, with the upstream pinging", async () => {
  // The browser's side: a socket still connecting, as Deno's server socket
  // stays when its client left before the 101 was written.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = silent.accept();
  const client = new WebSocket(`ws://127.0.0.1:${silent.addr.port}/`);
  // Not `onclose`: the tunnel sets that.
  const clientClosed = new Promise((resolve) =>
    client.addEventListener("close", resolve)
  );
  const answers: number[] = [];
  let pingPong: Promise<void> = Promise.resolve();
  await using up = startRawUpstream((conn) => {
    // Pings as fast as the tunnel answers them: the idle timer never runs
    // out. Bounded: the tunnel's end closes the connection.
    pingPong = (async () => {
      const buf = new Uint8Array(256);
      for (let i = 0; i < 1_000_000; i++) {
        await conn.write(encodeFrame(OPCODE.ping, new Uint8Array(0), null));
        if (await conn.read(buf) === null) return;
        answers.push(buf[0]! & 0x0f);
        if (answers.at(-1) !== OPCODE.pong) return await untilClosed(conn);
      }
    })().catch(() => {});
    return pingPong;
  });
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(up.origin).port),
  });
  const ended = Promise.withResolvers<void>();
  const failures: string[] = [];
  const reply: UpstreamReply = {
    head: {
      version: "HTTP/1.1",
      status: 101,
      reason: "Switching Protocols",
      fields: [],
      headLength: 0,
    },
    body: null,
    length: null,
    upgraded: { conn, rest: new Uint8Array(0) },
  };
  bridge(client, reply, "http://up/hub", {
    timeouts: { connectMs: 60_000, sendMs: 60_000, readMs: 300 },
    onClosed: () => ended.resolve(),
    onLateFailure: (error) => failures.push(error.message),
  });
  try {
    await within(ended.promise, 10_000, "tunnel's end");
    await within(pingPong, 10_000, "upstream's connection closed");
    deepStrictEqual(failures, ["client timed out"]);
    // Pongs all along (and the tunnel's close frame, unless it came in one
    // read with the last pong), then the connection's end.
    ok(answers.length > 0);
    ok(answers.every((op) => op === OPCODE.pong || op === OPCODE.close));
  } finally {
    try {
      conn.close();
    } catch { /* the tunnel closed it */ }
    (await accepted).close();
    silent.close();
    await clientClosed;
  }
});
