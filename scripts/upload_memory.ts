/**
 * The request-buffering memory bound, measured: a gateway process (the run
 * flags) takes `--clients` uploads of `--mib` MiB at once, plus `--stalled`
 * clients that send half a body and stop, and the script prints the
 * gateway's peak RSS (`VmHWM`, Linux) before and after. Bodies past
 * `client_body_buffer_size` go to temporary files, so the peak should not
 * grow with the upload sizes.
 *
 * ```sh
 * npx --yes deno@2.9.6 run -A scripts/upload_memory.ts --clients 40 --mib 25 --stalled 40
 * ```
 *
 * @module
 */

import { parseArgs } from "node:util";
import { spawnGateway } from "../tests/_utils.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    clients: { type: "string", default: "40" },
    mib: { type: "string", default: "25" },
    stalled: { type: "string", default: "40" },
  },
});
const clients = Number(values.clients);
const size = Number(values.mib) * 1024 * 1024;
const stalledCount = Number(values.stalled);

/** An upstream that reads each body whole and answers with its length. */
const upstream = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  async (req) => {
    let n = 0;
    for await (const chunk of req.body ?? []) n += chunk.length;
    return new Response(String(n));
  },
);
const dir = await Deno.makeTempDir();
const gw = await spawnGateway([
  "--listen",
  "127.0.0.1:0",
  "--upstream",
  `http://127.0.0.1:${upstream.addr.port}`,
  "--error-log",
  `${dir}/error.log`,
  "--access-log",
  "off",
  "--client-max-body-size",
  "0",
  "--client-body-temp-path",
  `${dir}/body`,
]);

function peakRss(): string {
  const status = Deno.readTextFileSync(`/proc/${gw.child.pid}/status`);
  const kib = (key: string) =>
    Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? 0);
  return `VmRSS ${(kib("VmRSS") / 1024).toFixed(0)} MB, VmHWM ${
    (kib("VmHWM") / 1024).toFixed(0)
  } MB`;
}

const out: string[] = [`before: ${peakRss()}`];
const stalled: Deno.Conn[] = [];
try {
  for (let i = 0; i < stalledCount; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    stalled.push(conn);
    const half = new Uint8Array(512 * 1024);
    await conn.write(
      new TextEncoder().encode(
        `POST /api/slow HTTP/1.1\r\nHost: x\r\nContent-Length: ${
          half.length * 2
        }\r\n\r\n`,
      ),
    );
    await conn.write(half);
  }
  const chunk = new Uint8Array(1024 * 1024).fill(120);
  const started = Date.now();
  const answers = await Promise.all(
    Array.from({ length: clients }, async () => {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= size) return c.close();
          sent += chunk.length;
          c.enqueue(chunk);
        },
      });
      const res = await fetch(`http://127.0.0.1:${gw.port}/api/upload`, {
        method: "POST",
        body,
        headers: { "content-length": String(size) },
      });
      return await res.text();
    }),
  );
  const ok = answers.filter((a) => a === String(size)).length;
  out.push(
    `${clients} uploads of ${values.mib} MiB (${ok} whole) with ${stalledCount} stalled clients in ${
      Date.now() - started
    } ms`,
    `after: ${peakRss()}`,
  );
} finally {
  for (const c of stalled) c.close();
  await gw[Symbol.asyncDispose]();
  await upstream.shutdown();
  await Deno.remove(dir, { recursive: true });
}
Deno.stdout.writeSync(new TextEncoder().encode(out.join("\n") + "\n"));
