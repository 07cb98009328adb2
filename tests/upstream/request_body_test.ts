import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { sendBody } from "../../src/upstream/request_body.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A byte stream like Deno.serve's request body, `sizes` bytes per pull. */
function byteStream(sizes: number[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    type: "bytes",
    // As Deno's socket streams: a default reader gets 64 KiB buffers.
    autoAllocateChunkSize: 64 * 1024,
    pull(controller) {
      const size = sizes[i++];
      if (size === undefined) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      const view = controller.byobRequest!.view as Uint8Array;
      const n = Math.min(size, view.byteLength);
      view.fill(97 + (i % 26), 0, n);
      controller.byobRequest!.respond(n);
    },
  });
}

/** A plain (not byte) stream of the given chunks. */
function chunkStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return ReadableStream.from(chunks);
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  chunked: boolean,
): Promise<{ text: string; writes: Uint8Array[]; lengths: number[] }> {
  const writes: Uint8Array[] = [];
  const lengths: number[] = [];
  let text = "";
  await sendBody(stream, {
    chunked,
    write: (bytes) => {
      writes.push(bytes);
      lengths.push(bytes.length);
      // The buffer is reused after this settles: decode now.
      text += dec.decode(bytes);
      return Promise.resolve();
    },
    onReadError: (error) => new Error("client gone", { cause: error }),
  });
  return { text, writes, lengths };
}

function expectedChunked(sizes: number[]): string {
  let out = "";
  sizes.forEach((size, i) => {
    out += `${size.toString(16)}\r\n${
      String.fromCharCode(97 + ((i + 1) % 26)).repeat(size)
    }\r\n`;
  });
  return out + "0\r\n\r\n";
}

for (const sizes of [[1], [15, 16], [255, 256, 4095], [65536], [3, 65536, 7]]) {
  Deno.test(`sendBody() frames byte-stream chunks of ${sizes.join(", ")} bytes`, async () => {
    const { text } = await collect(byteStream(sizes), true);
    strictEqual(text, expectedChunked(sizes));
  });
}

Deno.test("sendBody() passes a byte stream through unframed", async () => {
  const { text, lengths } = await collect(byteStream([5, 65536, 2]), false);
  strictEqual(text, "b".repeat(5) + "c".repeat(65536) + "d".repeat(2));
  deepStrictEqual(lengths, [5, 65536, 2]);
});

Deno.test("sendBody() reads a byte stream into one reused buffer", async () => {
  const { writes } = await collect(byteStream([10, 20, 30, 40]), true);
  strictEqual(writes.length, 5);
  // Each read transferred the previous buffer back into the stream, so every
  // view but the last chunk's (and the constant last chunk) is detached: the
  // memory was filled again, not left for the garbage collector.
  deepStrictEqual(writes.map((w) => w.byteLength), [0, 0, 0, 0, 5]);
});

Deno.test("sendBody() frames a plain stream's chunks and skips empty ones", async () => {
  const chunks = [enc.encode("hello"), new Uint8Array(0), enc.encode("x")];
  const { text, lengths } = await collect(chunkStream(chunks), true);
  strictEqual(text, "5\r\nhello\r\n1\r\nx\r\n0\r\n\r\n");
  deepStrictEqual(lengths, [10, 6, 5]);
  const plain = await collect(chunkStream(chunks), false);
  strictEqual(plain.text, "hellox");
});

Deno.test("sendBody() frames a plain stream's chunk larger than 64 KiB", async () => {
  const big = new Uint8Array(0x12345).fill(120);
  const { text } = await collect(chunkStream([big]), true);
  strictEqual(text, `12345\r\n${"x".repeat(0x12345)}\r\n0\r\n\r\n`);
});

for (const kind of ["byte", "plain"] as const) {
  Deno.test(`sendBody() wraps a ${kind} stream's read error and sends no last chunk`, async () => {
    let pulls = 0;
    const source = {
      pull(
        controller:
          | ReadableStreamDefaultController
          | ReadableByteStreamController,
      ) {
        if (pulls++ === 0) {
          controller.enqueue(enc.encode("part"));
          return;
        }
        controller.error(new Error("reset"));
      },
    };
    const stream = kind === "byte"
      ? new ReadableStream({ type: "bytes", ...source })
      : new ReadableStream<Uint8Array>(source);
    let text = "";
    await rejects(
      sendBody(stream, {
        chunked: true,
        write: (bytes) => {
          text += dec.decode(bytes);
          return Promise.resolve();
        },
        onReadError: (error) => new Error("client gone", { cause: error }),
      }),
      (error: Error) =>
        error.message === "client gone" &&
        (error.cause as Error).message === "reset",
    );
    strictEqual(text, "4\r\npart\r\n");
  });
}

Deno.test("sendBody() stops at a failed write and releases the stream", async () => {
  const stream = byteStream([10, 10, 10]);
  await rejects(
    sendBody(stream, {
      chunked: false,
      write: () => Promise.reject(new Error("upstream gone")),
      onReadError: (error) => new Error("client gone", { cause: error }),
    }),
    /upstream gone/,
  );
  strictEqual(stream.locked, false);
  await stream.cancel();
});
