/** The close frame the upstream gets when the browser's side ends, over real sockets. */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  readHead,
  startGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { sendableCloseCode } from "../../src/proxy/websocket_frames.ts";

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
