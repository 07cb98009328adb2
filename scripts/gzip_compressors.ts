/**
 * Which compressor the gzip filter uses, measured: CPU per body and output
 * size of `node:zlib` in one call (`gzipSync`), `node:zlib` as a stream
 * (`createGzip`, 64 KiB writes) and `CompressionStream("gzip")` (no level:
 * zlib's default, 6), for a 200 KB script and a 5 KB JSON answer.
 *
 * Usage: deno run scripts/gzip_compressors.ts
 *
 * @module
 */

import process from "node:process";
import { createGzip, gzipSync } from "node:zlib";

/** Text that compresses as code does (not one byte repeated). */
function script(size: number): Uint8Array<ArrayBuffer> {
  let out = "";
  for (let i = 0; out.length < size; i++) {
    out += `function f${i}(a, b) { if (a.k${i % 13} > ${
      i * 7919 % 1009
    }) return "v${
      i % 97
    }" + b; return a.items.filter((x) => x.id !== ${i}); }\n`;
  }
  return new TextEncoder().encode(out.slice(0, size));
}

function json(size: number): Uint8Array<ArrayBuffer> {
  const rows = [];
  let text = "";
  for (let i = 0; text.length < size; i++) {
    rows.push({ id: i, station: `ST-${1000 + i * 7919 % 997}`, busy: i % 3 });
    text = JSON.stringify(rows);
  }
  return new TextEncoder().encode(text);
}

async function stream(data: Uint8Array, level: number): Promise<number> {
  const z = createGzip({ level });
  let n = 0;
  const ended = new Promise<void>((resolve, reject) => {
    z.on("data", (c: Uint8Array) => n += c.length);
    z.on("end", resolve);
    z.on("error", reject);
  });
  for (let at = 0; at < data.length; at += 65536) {
    z.write(data.subarray(at, at + 65536));
  }
  z.end();
  await ended;
  return n;
}

async function compressionStream(
  data: Uint8Array<ArrayBuffer>,
): Promise<number> {
  let n = 0;
  const cs = new CompressionStream("gzip");
  const writer = cs.writable.getWriter();
  const written = writer.write(data).then(() => writer.close());
  for await (const c of cs.readable) n += c.length;
  await written;
  return n;
}

const inputs: [string, Uint8Array<ArrayBuffer>, number][] = [
  ["script 200 KB", script(200 * 1024), 100],
  ["JSON 5 KB", json(5 * 1024), 2000],
];
const rows = [
  "| body | compressor | bytes out | CPU µs |",
  "|---|---|---|---|",
];
for (const [name, data, runs] of inputs) {
  const ways: [string, () => Promise<number>][] = [
    [
      "gzipSync level 1",
      () => Promise.resolve(gzipSync(data, { level: 1 }).length),
    ],
    [
      "gzipSync level 6",
      () => Promise.resolve(gzipSync(data, { level: 6 }).length),
    ],
    ["createGzip level 1", () => stream(data, 1)],
    ["createGzip level 6", () => stream(data, 6)],
    ["CompressionStream", () => compressionStream(data)],
  ];
  for (const [way, run] of ways) {
    let size = 0;
    for (let i = 0; i < 10; i++) size = await run();
    const before = process.cpuUsage();
    for (let i = 0; i < runs; i++) await run();
    const used = process.cpuUsage(before);
    const us = (used.user + used.system) / runs;
    rows.push(`| ${name} | ${way} | ${size} | ${us.toFixed(0)} |`);
  }
}
Deno.stdout.writeSync(new TextEncoder().encode(rows.join("\n") + "\n"));
