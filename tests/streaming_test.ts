/**
 * Bodies are streamed, not buffered: 100 MiB each way through a gateway
 * process while its peak RSS (VmHWM, Linux /proc) stays flat.
 */
import { strictEqual } from "node:assert/strict";
import { spawnGateway } from "./_utils.ts";

const MIB = 1024 * 1024;
const TOTAL = 100 * MIB;
const CHUNK = new Uint8Array(64 * 1024).fill(97);

function generated(bytes: number): ReadableStream<Uint8Array> {
  let left = bytes;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const n = Math.min(left, CHUNK.length);
      controller.enqueue(
        n === CHUNK.length ? CHUNK.slice() : CHUNK.slice(0, n),
      );
      left -= n;
    },
  });
}

// Deno asks for --allow-all to read /proc directly; the suite has
// --allow-run, so `cat` reads it instead of widening the permissions.
async function peakRssMiB(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] })
    .output();
  const status = new TextDecoder().decode(out.stdout);
  return Number(status.match(/VmHWM:\s+(\d+) kB/)![1]) / 1024;
}

Deno.test("gateway streams 100 MiB up and down with flat memory", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const dir = await Deno.makeTempDir();
  let uploaded = 0;
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      if (req.method === "POST") {
        for await (const chunk of req.body!) uploaded += chunk.byteLength;
        return new Response(String(uploaded));
      }
      return new Response(generated(TOTAL), {
        headers: { "content-length": String(TOTAL) },
      });
    },
  );
  try {
    await using gw = await spawnGateway([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      `http://127.0.0.1:${upstream.addr.port}`,
      "--error-log",
      `${dir}/e.log`,
      "--access-log",
      `${dir}/a.log`,
    ]);
    // Warm up (JIT, pools) so the baseline is the gateway at rest.
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`http://127.0.0.1:${gw.port}/api/warm`, {
        method: "POST",
        body: "x".repeat(64 * 1024),
      });
      await r.text();
    }
    uploaded = 0;
    const before = await peakRssMiB(gw.child.pid);

    const up = await fetch(`http://127.0.0.1:${gw.port}/api/upload`, {
      method: "POST",
      body: generated(TOTAL),
      duplex: "half",
    } as RequestInit);
    strictEqual(await up.text(), String(TOTAL));

    const down = await fetch(`http://127.0.0.1:${gw.port}/api/download`);
    let received = 0;
    for await (const chunk of down.body!) received += chunk.byteLength;
    strictEqual(received, TOTAL);

    const growth = await peakRssMiB(gw.child.pid) - before;
    // Buffering either body would add at least 100 MiB; streaming adds a few
    // MiB of pipe buffers. 40 MiB leaves room for GC timing.
    strictEqual(
      growth < 40,
      true,
      `peak RSS grew by ${growth.toFixed(1)} MiB (from ${before.toFixed(1)})`,
    );
  } finally {
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
