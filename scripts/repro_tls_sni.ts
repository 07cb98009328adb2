/**
 * Shows why the gateway refuses servers with different certificates on one
 * TLS port (main README, tls-sni). In Deno 2.9.6 `Deno.serve` takes one
 * certificate: with only the unstable per-name hook
 * (`Symbol.for("unstableSniResolver")`, ext/net/02_tls.js) it throws, and
 * beside `cert` and `key` the hook is never called. `Deno.listenTls` calls
 * it, but serving HTTP on such a listener needs Deno's internal
 * `serveHttpOnListener`, and the answers are kept per name the client sends
 * with no limit (ext/tls/tls_key.rs `TlsKeyResolver::resolve`): the script
 * sends N handshakes with one name (twice, the first round to let the
 * process grow to its size), then N with made-up names, and prints the
 * hook's calls and the process's RSS growth.
 *
 * Usage: deno run -A --v8-flags=--expose-gc scripts/repro_tls_sni.ts [N]
 * Measured here (N = 10,000): one name, 0 calls (answered from the cache),
 * RSS +1.8 MB; made-up names, 10,000 calls, RSS +12.5 MB more (about
 * 1.2 KB a name, never given back).
 *
 * @module
 */

import { makeCertificate } from "../tests/_tls.ts";

const RESOLVER = Symbol.for("unstableSniResolver");
const SERVER_NAME = Symbol.for("unstableServerName");
const dir = await Deno.makeTempDir({ prefix: "tls-sni-" });
const pair = await makeCertificate(dir);
const key = await Deno.readTextFile(pair.keyPath);
let calls = 0;
const resolver = () => {
  calls++;
  return { cert: pair.cert, key };
};
const out: string[] = [];
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

try {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    [RESOLVER]: resolver,
    onListen() {},
  } as Deno.ServeTcpOptions, () => new Response("x"));
  await server.shutdown();
  out.push("Deno.serve with the hook alone: started");
} catch (error) {
  out.push(`Deno.serve with the hook alone: ${error}`);
}

{
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: pair.cert,
    key,
    [RESOLVER]: resolver,
    onListen() {},
  } as Deno.ServeTcpOptions, () => new Response("x"));
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: server.addr.port,
    caCerts: [pair.cert],
    [SERVER_NAME]: "other.test",
    unsafelyDisableHostnameVerification: true,
  } as Deno.ConnectTlsOptions);
  await conn.handshake().catch(() => {});
  conn.close();
  await server.shutdown();
  out.push(`Deno.serve with cert, key and the hook: ${calls} calls`);
}

const listener = Deno.listenTls(
  {
    hostname: "127.0.0.1",
    port: 0,
    [RESOLVER]: resolver,
  } as unknown as Deno.ListenTlsOptions & Deno.TlsCertifiedKeyPem,
);
const port = (listener.addr as Deno.NetAddr).port;
const accepting = (async () => {
  for await (const conn of listener) {
    conn.handshake().catch(() => {}).finally(() => conn.close());
  }
})().catch(() => {});

/** One handshake that sends `name` as its server name. */
async function hello(name: string): Promise<void> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port,
    caCerts: [pair.cert],
    [SERVER_NAME]: name,
    unsafelyDisableHostnameVerification: true,
  } as Deno.ConnectTlsOptions);
  await conn.handshake().catch(() => {});
  conn.close();
}

const n = Number(Deno.args[0] ?? 3000);
// A first round with one name, so the process's own growth is over.
for (let i = 0; i < n; i++) await hello("station.test");
gc();
const base = Deno.memoryUsage().rss;
calls = 0;
for (let i = 0; i < n; i++) await hello("station.test");
gc();
const same = Deno.memoryUsage().rss;
out.push(
  `${n} handshakes, one name: ${calls} calls, RSS +${
    ((same - base) / 1e6).toFixed(1)
  } MB`,
);
calls = 0;
const label = (c: string) => c.repeat(60);
for (let i = 0; i < n; i++) {
  await hello(`n${i}.${label("x")}.${label("y")}.${label("z")}.test`);
}
gc();
const made = Deno.memoryUsage().rss;
out.push(
  `${n} handshakes, made-up names: ${calls} calls, RSS +${
    ((made - same) / 1e6).toFixed(1)
  } MB more`,
);
listener.close();
await accepting;
await Deno.remove(dir, { recursive: true });
Deno.stdout.writeSync(new TextEncoder().encode(out.join("\n") + "\n"));
