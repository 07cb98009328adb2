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
  // Pieces large enough to be written as they are, not gathered.
  const sizes = [20_000, 30_000, 40_000, 50_000];
  const { writes } = await collect(byteStream(sizes), true);
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

/**
 * Sends a byte stream of `sizes` through `sendBody`, each write settling
 * on the event loop's next turn, after every read the stream can answer
 * at once: pieces come faster than the upstream takes them, as a
 * chunked body of tiny chunks already received does. Returns each write's
 * text.
 */
async function collectSlowly(
  sizes: number[],
  chunked: boolean,
): Promise<string[]> {
  const writes: string[] = [];
  const stream = byteStream(sizes);
  await sendBody(stream, {
    chunked,
    write: (bytes) => {
      writes.push(dec.decode(bytes));
      return new Promise((resolve) => setTimeout(resolve, 0));
    },
    onReadError: (error) => new Error("client gone", { cause: error }),
  });
  return writes;
}

/** A chunked body decoded. */
function unchunk(text: string): string {
  let body = "";
  for (let at = 0;;) {
    const eol = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, eol), 16);
    if (size === 0) return body;
    body += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

Deno.test("sendBody() gathers small pieces that come while a write is under way, in order, around larger ones", async (t) => {
  // [piece sizes, the writes' body bytes]
  const cases: [number[], number[]][] = [
    // The first at once, the rest together once it is written.
    [[1, 1, 1, 1, 1, 1], [1, 5]],
    [Array(1000).fill(1), [1, 999]],
    // A full block (64 KiB) waits for the write under way, then goes.
    [Array(70_000).fill(1), [1, 65_536, 4463]],
    // A larger piece goes as it is, after what was gathered before it.
    [[3, 20_000, 5, 6, 7, 30_000, 1], [3, 20_000, 5, 13, 30_000, 1]],
  ];
  for (const [sizes, written] of cases) {
    await t.step(`${sizes.length} pieces`, async () => {
      const body = sizes.map((n, i) =>
        String.fromCharCode(97 + ((i + 1) % 26)).repeat(n)
      ).join("");
      const plain = await collectSlowly(sizes, false);
      strictEqual(plain.join(""), body);
      deepStrictEqual(plain.map((w) => w.length), written);
      const framed = await collectSlowly(sizes, true);
      strictEqual(unchunk(framed.join("")), body);
      // And the last chunk.
      strictEqual(framed.length, written.length + 1);
    });
  }
});

Deno.test("sendBody() answers a gathered write's failure at once, not after the client's next bytes", async () => {
  let pulls = 0;
  // Two small pieces, then nothing until cancelled, as a client gone quiet.
  const stream = new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (pulls++ < 2) controller.enqueue(enc.encode("ab"));
    },
  });
  let writes = 0;
  await rejects(
    sendBody(stream, {
      chunked: true,
      // The first write is taken; the second (the gathered piece) fails
      // while the body's read waits.
      write: () =>
        writes++ === 0
          ? new Promise((resolve) => setTimeout(resolve, 0))
          : Promise.reject(new Error("upstream gone")),
      onReadError: (error) => new Error("client gone", { cause: error }),
    }),
    /upstream gone/,
  );
  strictEqual(writes, 2);
});
