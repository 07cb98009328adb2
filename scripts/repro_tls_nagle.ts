/**
 * Reproduces a Deno 2.9.6 limit the gateway documents: `Deno.serve` sets
 * `TCP_NODELAY` on the connections of a plain listener only
 * (ext/http/http_next.rs `serve_http_on`), so on a TLS listener Nagle's
 * algorithm holds a response's body until the client acknowledges its head,
 * and a client delays that acknowledgement (about 40 ms on Linux). A
 * kept-alive client then waits that long for every response of a fixed
 * length past a few hundred bytes. The script answers `GET /N` with N bytes
 * over TLS and over plain HTTP and prints the median time of 20 requests on
 * one connection, for HTTP/1.1 and for HTTP/2 (`fetch`, ALPN), and over
 * HTTP/1.1 with `Transfer-Encoding: chunked`, the framing in which Deno
 * writes head and body at once (what the gateway sends on a TLS port:
 * src/response/tls_one_write.ts).
 *
 * Usage: deno run -A scripts/repro_tls_nagle.ts
 * Measured here: 100 bytes 0.2 ms both; 2,048 bytes 44 ms over TLS (HTTP/1.1
 * and HTTP/2 alike), 0.2 ms plain, 0.2 ms over TLS chunked.
 *
 * @module
 */

import { makeCertificate } from "../tests/_tls.ts";

const dir = await Deno.makeTempDir({ prefix: "tls-nagle-" });
const cert = await makeCertificate(dir);
const handler = (req: Request) => {
  const url = new URL(req.url);
  return new Response(
    new Uint8Array(Number(url.pathname.slice(1))).fill(0x61),
    url.search === "?chunked"
      ? { headers: { "transfer-encoding": "chunked" } }
      : {},
  );
};
const tls = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  cert: cert.cert,
  key: await Deno.readTextFile(cert.keyPath),
  onListen() {},
}, handler);
const plain = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  handler,
);

const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;

/** HTTP/1.1 on one kept-alive connection: ms per request. */
async function http1(
  conn: Deno.Conn,
  size: number,
  chunked = false,
): Promise<number> {
  const times: number[] = [];
  const buf = new Uint8Array(64 * 1024);
  const ask = new TextEncoder().encode(
    `GET /${size}${chunked ? "?chunked" : ""} HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    await conn.write(ask);
    let got = 0;
    let text = "";
    // The head is small; the body is `size` bytes after it (and the
    // framing of one chunk, a size line and two line ends, when chunked).
    const framing = chunked ? size.toString(16).length + 9 : 0;
    while (true) {
      const n = await conn.read(buf);
      if (n === null) throw new Error("closed");
      got += n;
      text += new TextDecoder().decode(buf.subarray(0, Math.min(n, 512)));
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0 && got >= end + 4 + size + framing) break;
    }
    times.push(performance.now() - start);
  }
  return median(times);
}

/** HTTP/2 by fetch (ALPN) on one connection: ms per request. */
async function http2(size: number): Promise<number> {
  using client = Deno.createHttpClient({ caCerts: [cert.cert] });
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    const res = await fetch(`https://localhost:${tls.addr.port}/${size}`, {
      client,
    });
    await res.arrayBuffer();
    times.push(performance.now() - start);
  }
  return median(times);
}

const out: string[] = [];
for (const size of [100, 2048]) {
  const t = await Deno.connectTls({
    hostname: "localhost",
    port: tls.addr.port,
    caCerts: [cert.cert],
  });
  const p = await Deno.connect({
    hostname: "127.0.0.1",
    port: plain.addr.port,
  });
  out.push(
    `${size} bytes: TLS HTTP/1.1 ${(await http1(t, size)).toFixed(1)} ms, ` +
      `TLS HTTP/2 ${(await http2(size)).toFixed(1)} ms, ` +
      `plain HTTP/1.1 ${(await http1(p, size)).toFixed(1)} ms, ` +
      `TLS HTTP/1.1 chunked ${(await http1(t, size, true)).toFixed(1)} ms`,
  );
  t.close();
  p.close();
}
await tls.shutdown();
await plain.shutdown();
await Deno.remove(dir, { recursive: true });
Deno.stdout.writeSync(new TextEncoder().encode(out.join("\n") + "\n"));
