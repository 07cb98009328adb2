/**
 * TLS handshakes that never happen, measured: a gateway process (the run
 * flags) serving a `listen … ssl` port takes `--idle` connections that
 * send nothing and `--partial` ones that send the first bytes of a
 * ClientHello and stop. The script prints the gateway's RSS (Linux) before,
 * with them open, and after they are closed, how many the gateway closed
 * itself within `--wait` seconds, and whether a real client is still served
 * meanwhile.
 *
 * ```sh
 * npx --yes deno@2.9.6 run -A scripts/tls_handshake_memory.ts --idle 300 --partial 300 --wait 20
 * ```
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { refusedPort, spawnGateway } from "../tests/_utils.ts";
import { makeCertificate } from "../tests/_tls.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    idle: { type: "string", default: "300" },
    partial: { type: "string", default: "300" },
    wait: { type: "string", default: "20" },
  },
});
const idleCount = Number(values.idle);
const partialCount = Number(values.partial);
const waitMs = Number(values.wait) * 1000;

const dir = await Deno.makeTempDir({ prefix: "tls-memory-" });
for (const sub of ["conf", "logs"]) await Deno.mkdir(join(dir, sub));
const cert = await makeCertificate(join(dir, "conf"));
const port = refusedPort();
await Deno.writeTextFile(
  join(dir, "conf", "nginx.conf"),
  `events {}
http {
  access_log off;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
    location / { return 200 "ok\\n"; }
  }
}
`,
);
const gw = await spawnGateway([
  "--nginx-conf",
  join(dir, "conf", "nginx.conf"),
]);

function rss(): string {
  const status = Deno.readTextFileSync(`/proc/${gw.child.pid}/status`);
  const kib = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
  return `VmRSS ${(kib / 1024).toFixed(1)} MB`;
}

async function served(): Promise<boolean> {
  using client = Deno.createHttpClient({ caCerts: [cert.cert] });
  const response = await fetch(`https://localhost:${port}/`, {
    client,
    signal: AbortSignal.timeout(10_000),
  });
  return (await response.text()) === "ok\n";
}

/** The first bytes of a TLS 1.2 ClientHello record, cut short. */
const PARTIAL = new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]);

const out: string[] = [`before: ${rss()}`];
const conns: Deno.Conn[] = [];
let closedByGateway = 0;
try {
  for (let i = 0; i < idleCount + partialCount; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    if (i >= idleCount) await conn.write(PARTIAL);
    conns.push(conn);
  }
  out.push(
    `${idleCount} silent + ${partialCount} partial ClientHello open: ${rss()}`,
  );
  out.push(`a real client served meanwhile: ${await served()}`);
  // Each read ends when the gateway closes the connection, or at the wait.
  const deadline = AbortSignal.timeout(waitMs);
  await Promise.all(conns.map(async (conn) => {
    const buf = new Uint8Array(64);
    const read = conn.read(buf).then(() => true, () => true);
    const timedOut = new Promise<boolean>((resolve) =>
      deadline.addEventListener("abort", () => resolve(false), { once: true })
    );
    if (await Promise.race([read, timedOut])) closedByGateway++;
  }));
  out.push(
    `closed by the gateway within ${
      waitMs / 1000
    } s: ${closedByGateway} of ${conns.length}; ${rss()}`,
  );
} finally {
  for (const conn of conns) {
    try {
      conn.close();
    } catch {
      // closed already
    }
  }
}
// Give the gateway a moment to notice the closes (bounded).
await new Promise((resolve) => setTimeout(resolve, 1000));
out.push(`after the clients closed: ${rss()}`);
await gw[Symbol.asyncDispose]();
await Deno.remove(dir, { recursive: true });
Deno.stdout.writeSync(new TextEncoder().encode(out.join("\n") + "\n"));
