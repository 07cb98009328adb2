/**
 * Reproduces a Deno 2.9.6 limit the gateway documents: a server WebSocket
 * (`Deno.upgradeWebSocket`) joins a message's fragments in Rust without
 * limit before JavaScript sees anything, and neither `close()` nor any
 * other call stops it reading: only the peer's close or a broken connection
 * does. A client sends masked non-final 1 MiB fragments, never the final
 * one; the server calls `close(1009)` after the first 16 MiB.
 *
 * Usage: deno run -A scripts/repro_ws_fragments.ts [MiB]
 * Measured here: 300 MiB -> peak RSS about 400 MiB, the close frame sent at
 * once, the fragments still read to the last.
 *
 * @module
 */

const total = Number(Deno.args[0] ?? 300);
const rss = () =>
  Number(
    Deno.readTextFileSync("/proc/self/status").match(/VmHWM:\s+(\d+)/)![1],
  ) / 1024;

let socket: WebSocket | undefined;
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  (req) => {
    const upgraded = Deno.upgradeWebSocket(req);
    socket = upgraded.socket;
    return upgraded.response;
  },
);
const conn = await Deno.connect({
  hostname: "127.0.0.1",
  port: server.addr.port,
});
await conn.write(
  new TextEncoder().encode(
    "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
      "Sec-WebSocket-Version: 13\r\n\r\n",
  ),
);
await conn.read(new Uint8Array(4096)); // the 101
const size = 1024 * 1024;
/** A masked (zero key) binary or continuation frame, never final. */
function fragment(first: boolean): Uint8Array {
  const frame = new Uint8Array(14 + size);
  frame[0] = first ? 0x02 : 0x00;
  frame[1] = 0x80 | 127;
  new DataView(frame.buffer).setBigUint64(2, BigInt(size));
  return frame;
}
let closeAt = 0;
for (let i = 0; i < total; i++) {
  const frame = fragment(i === 0);
  for (let at = 0; at < frame.length;) {
    at += await conn.write(frame.subarray(at));
  }
  if (i === 16) {
    closeAt = Math.round(rss());
    socket?.close(1009);
  }
}
const report = {
  sentMiB: total,
  peakRssAtCloseMiB: closeAt,
  peakRssMiB: Math.round(rss()),
};
conn.close();
await server.shutdown();
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(report) + "\n"));
