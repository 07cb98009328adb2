/** A byte range of an open file as a response body stream. */
import { deepStrictEqual, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import { ConnectionCut } from "../../src/closing_connections.ts";
import { FileBody, type FileBodyEvent } from "../../src/static/file_slice.ts";

/** The body's stream, as the static handler makes it. */
function fileSlice(
  file: Deno.FsFile,
  start: number,
  length: number,
  sink: FileBody["sink"] = null,
): ReadableStream<Uint8Array> {
  const body = new FileBody(file, "/srv/data.bin", { start, length }, "linux");
  body.sink = sink;
  return body.stream;
}

const SIZE = 150 * 1024; // three reads of 64 KiB or less
const bytes = Uint8Array.from({ length: SIZE }, (_, i) => (i * 7) & 0xff);

Deno.test("FileBody streams exactly the range asked for", async (t) => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "data.bin");
  await Deno.writeFile(path, bytes);
  const table: [string, number, number][] = [
    ["one byte at the start", 0, 1],
    ["one byte at the end", SIZE - 1, 1],
    ["the middle, across a 64 KiB read", 60_000, 10_000],
    ["the whole file", 0, SIZE],
    ["the tail from an odd offset", 12_345, SIZE - 12_345],
  ];
  try {
    for (const [name, start, length] of table) {
      await t.step(name, async () => {
        const file = await Deno.open(path, { read: true });
        const got = await new Response(fileSlice(file, start, length)).bytes();
        deepStrictEqual(got, bytes.subarray(start, start + length));
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileBody tells nginx's line when the file is shorter than the range, cuts the body and closes the file", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "data.bin");
  await Deno.writeFile(path, bytes.subarray(0, 100));
  try {
    const file = await Deno.open(path, { read: true });
    const told: FileBodyEvent[] = [];
    await rejects(
      new Response(fileSlice(file, 50, 100, (e) => told.push(e))).bytes(),
      ConnectionCut,
    );
    deepStrictEqual(told, [{
      level: "alert",
      message: 'pread() read only 50 of 100 from "/srv/data.bin"',
      action: "sending response to client",
    }]);
    // Closed by the stream: closing again throws BadResource.
    throws(() => file.close(), Deno.errors.BadResource);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileBody closes the file when the reader cancels", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "data.bin");
  await Deno.writeFile(path, bytes);
  try {
    const file = await Deno.open(path, { read: true });
    const reader = fileSlice(file, 0, SIZE).getReader();
    await reader.read();
    await reader.cancel();
    throws(() => file.close(), Deno.errors.BadResource);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
