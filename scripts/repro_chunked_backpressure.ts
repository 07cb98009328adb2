/**
 * Reproduces a Deno 2.9.6 limit the gateway documents: `Deno.serve` reads a
 * chunked request body ahead of a slow JavaScript reader without
 * backpressure, so memory grows with the body; with `Content-Length` it stays
 * bounded. A Python client (separate process) sends as fast as it can; the
 * handler reads one chunk per millisecond.
 *
 * Usage: deno run -A scripts/repro_chunked_backpressure.ts length|chunked [MiB]
 * Measured here: length 100 and 300 MiB -> peak +37 MiB both; chunked 100 MiB
 * -> +69 MiB, 300 MiB -> +129 MiB.
 *
 * @module
 */

const mode = Deno.args[0] === "chunked" ? "chunked" : "length";
const total = Number(Deno.args[1] ?? 100) * 1024 * 1024;
const rss = () =>
  Number(
    Deno.readTextFileSync("/proc/self/status").match(/VmRSS:\s+(\d+)/)![1],
  ) / 1024;

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  async (req) => {
    let n = 0;
    let peak = 0;
    for await (const c of req.body!) {
      n += c.length;
      await new Promise((r) => setTimeout(r, 1));
      peak = Math.max(peak, rss());
    }
    return new Response(`${n} bytes, peak RSS ${peak.toFixed(0)} MiB`);
  },
);
const client = `
import socket, sys
s = socket.create_connection(("127.0.0.1", ${server.addr.port}))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
chunk = b"a" * 65536
te = "Content-Length: ${total}" if sys.argv[1] == "length" else "Transfer-Encoding: chunked"
s.sendall(("POST / HTTP/1.1\\r\\nHost: x\\r\\n%s\\r\\nConnection: close\\r\\n\\r\\n" % te).encode())
for _ in range(${total} // 65536):
    s.sendall(chunk if sys.argv[1] == "length" else b"10000\\r\\n" + chunk + b"\\r\\n")
if sys.argv[1] != "length":
    s.sendall(b"0\\r\\n\\r\\n")
print(s.recv(1000).decode().split("\\r\\n\\r\\n")[-1])
`;
// deno-lint-ignore no-console
console.log(`RSS before: ${rss().toFixed(0)} MiB`);
const out = await new Deno.Command("python3", {
  args: ["-c", client, mode],
  stdout: "piped",
}).output();
// deno-lint-ignore no-console
console.log(`${mode}: ${new TextDecoder().decode(out.stdout).trim()}`);
await server.shutdown();
