/**
 * Bodies are streamed, not buffered: 128 MiB each way through a gateway
 * process while its peak RSS (VmHWM, Linux /proc) stays flat.
 */
import { strictEqual } from "node:assert/strict";
import {
  readHead,
  spawnGateway,
  startGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "./_utils.ts";

const MIB = 1024 * 1024;
/**
 * Eight times the flatness bound: a body held whole adds all of it to the
 * peak RSS, which 128 MiB shows as plainly as 512 MiB did (the growth measured
 * for a streamed body, 1-8 MiB, was the same at both sizes), for a quarter
 * of the bytes to move.
 */
const TOTAL = 128 * MIB;
const WARM = 16 * MIB;
/** Growth of the peak RSS that still counts as flat. */
const FLAT_MIB = 16;
const CHUNK = new Uint8Array(64 * 1024).fill(97);

// Deno asks for --allow-all to read /proc directly; the suite has
// --allow-run, so `cat` reads it instead of widening the permissions.
/** POSTs TOTAL bytes on a raw socket and returns the response body. */
async function rawUpload(
  port: number,
  framing: "length" | "chunked",
  total = TOTAL,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const enc = new TextEncoder();
  const te = framing === "length"
    ? `Content-Length: ${total}`
    : "Transfer-Encoding: chunked";
  await conn.write(enc.encode(
    `POST /api/upload HTTP/1.1\r\nHost: localhost\r\n${te}\r\nConnection: close\r\n\r\n`,
  ));
  // Whole chunks in one write each, with Nagle off, as a browser sends
  // them: small separate writes of framing bytes would wait on delayed ACKs
  // (40 ms each) and measure TCP, not the gateway.
  conn.setNoDelay(true);
  const framed = framing === "chunked"
    ? new Uint8Array([
      ...enc.encode(`${CHUNK.length.toString(16)}\r\n`),
      ...CHUNK,
      ...enc.encode("\r\n"),
    ])
    : CHUNK;
  for (let sent = 0; sent < total; sent += CHUNK.length) {
    let written = 0;
    while (written < framed.length) {
      written += await conn.write(framed.subarray(written));
    }
  }
  if (framing === "chunked") await conn.write(enc.encode("0\r\n\r\n"));
  const text = await new Response(conn.readable).text();
  return text.slice(text.indexOf("\r\n\r\n") + 4);
}

/** GETs `bytes` through the gateway and returns how many arrived. */
async function download(port: number, bytes: number): Promise<number> {
  const res = await fetch(
    `http://127.0.0.1:${port}/api/download?bytes=${bytes}`,
  );
  let received = 0;
  for await (const chunk of res.body!) received += chunk.byteLength;
  return received;
}

/** Fails unless `growth` (MiB of peak RSS) is under {@linkcode FLAT_MIB}. */
function assertFlat(direction: string, growth: number, from: number): void {
  strictEqual(
    growth < FLAT_MIB,
    true,
    `${direction}: peak RSS grew by ${growth.toFixed(1)} MiB (from ${
      from.toFixed(1)
    })`,
  );
}

async function peakRssMiB(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] })
    .output();
  const status = new TextDecoder().decode(out.stdout);
  return Number(status.match(/VmHWM:\s+(\d+) kB/)![1]) / 1024;
}

Deno.test("gateway streams 128 MiB up and down with flat memory", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const dir = await Deno.makeTempDir();
  const upstream = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      new URL("./_stream_upstream.ts", import.meta.url).pathname,
      String(TOTAL),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = upstream.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  const firstLine = await lines.read();
  const upstreamPort = Number(firstLine.value?.match(/port (\d+)/)?.[1]);
  try {
    await using gw = await spawnGateway([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      `http://127.0.0.1:${upstreamPort}`,
      "--error-log",
      `${dir}/e.log`,
      "--access-log",
      `${dir}/a.log`,
      "--client-max-body-size",
      "0",
    ]);
    // Warm up (JIT, pools, the allocator) so the baseline is a gateway
    // that has moved bytes both ways, and growth is what the big bodies add.
    strictEqual(await rawUpload(gw.port, "length", WARM), String(WARM));
    strictEqual(await download(gw.port, WARM), WARM);
    const before = await peakRssMiB(gw.child.pid);

    // The upload goes over a raw socket, as a browser sends it.
    strictEqual(await rawUpload(gw.port, "length"), String(TOTAL));
    const upGrowth = await peakRssMiB(gw.child.pid) - before;
    // Buffering the body adds all of it. Read chunk by chunk into new
    // buffers, it added 31-36 MiB of chunks waiting for V8's external-memory
    // heuristic; read into one reused buffer (src/upstream/request_body.ts), 4-8.
    assertFlat("upload", upGrowth, before);

    const afterUp = await peakRssMiB(gw.child.pid);
    strictEqual(await download(gw.port, TOTAL), TOTAL);
    const downGrowth = await peakRssMiB(gw.child.pid) - afterUp;
    // Each chunk of a response body is a new buffer that Deno.serve keeps
    // until it is sent. Left to V8's heuristics they added 35-45 MiB here;
    // collected every 4 MiB (src/runtime/gc_pacer.ts), 6-9.
    assertFlat("download", downGrowth, afterUp);

    // A chunked upload arrives whole too (8 MiB: this part checks bytes,
    // not memory). It is outside the measured window: Deno 2.9.6's server
    // reads a chunked request body ahead of a slow JavaScript reader without
    // backpressure (scripts/repro_chunked_backpressure.ts), and delivers it
    // slowly for some client write patterns (README "Known differences").
    // With the default client-max-body-size such bodies are buffered up to
    // 1 MiB by design; browsers send no chunked uploads over HTTP/1.1.
    strictEqual(
      await rawUpload(gw.port, "chunked", 8 * MIB),
      String(8 * MIB),
    );
  } finally {
    upstream.kill();
    await upstream.status;
    await lines.cancel();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Reads `keep` bytes of a GET's answer (head included), then closes the
 * connection, as a user cancelling a download does; returns what arrived.
 */
async function abortedGet(port: number, path: string, keep: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    ),
  );
  const buf = new Uint8Array(64 * 1024);
  let received = 0;
  while (received < keep) {
    const n = await conn.read(buf);
    if (n === null) break;
    received += n;
  }
  conn.close();
  return received;
}

Deno.test("$body_bytes_sent of a cancelled 200 MB download is what was sent", async (t) => {
  const size = 200_000_000;
  const dir = await Deno.makeTempDir();
  // A sparse file: 200 MB on disk costs nothing.
  const file = await Deno.open(`${dir}/big.bin`, { write: true, create: true });
  await file.truncate(size);
  file.close();
  await using up = startRawUpstream(async (conn) => {
    await readHead(conn);
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`,
    );
    // Until the gateway closes the connection (the client left).
    for (let sent = 0; sent < size; sent += CHUNK.length) {
      await conn.write(CHUNK);
    }
  });
  await using gw = await startGateway({ upstreamUrl: up.origin, root: dir });
  try {
    for (const path of ["/api/download", "/big.bin"]) {
      await t.step(path, async () => {
        const before = gw.accessLines.length;
        const received = await abortedGet(gw.port, path, MIB);
        await waitFor(() => gw.accessLines.length > before, 10_000);
        const logged = Number(
          gw.accessLines.at(-1)!.match(/" 200 (\d+) "/)![1],
        );
        // What went into the socket: what the client read, and less than
        // the socket buffers and one chunk in flight beyond it.
        strictEqual(logged >= received - 1024, true, `${logged} ${received}`);
        strictEqual(logged < 64 * MIB, true, `${logged}`);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
