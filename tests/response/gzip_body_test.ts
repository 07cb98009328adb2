import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Buffer } from "node:buffer";
import { constants, gunzipSync } from "node:zlib";
import { deflateOptions, gzipStream } from "../../src/response/gzip_body.ts";

const encode = (text: string) => new TextEncoder().encode(text);

/** Text that does not collapse to nothing when deflated. */
function text(size: number): Uint8Array {
  let out = "";
  for (let i = 0; out.length < size; i++) out += `${i * 7919 % 100003},`;
  return encode(out.slice(0, size));
}

async function collect(
  stream: ReadableStream<Uint8Array>,
): Promise<Uint8Array[]> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

function joined(parts: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (all.set(p, at), at + p.length), 0);
  return all;
}

Deno.test("deflateOptions() shrinks the window for a short body as ngx_http_gzip_filter_memory", async (t) => {
  const cases: [number | null, number, number][] = [
    [null, 15, 8],
    [0, 15, 8],
    [100_000, 15, 8],
    [16_122, 15, 8], // (1 << 14) - 262 is not less
    [16_121, 14, 7],
    [5_000, 13, 6],
    [20, 9, 2],
    [1, 9, 2],
  ];
  for (const [length, windowBits, memLevel] of cases) {
    await t.step(
      String(length),
      () =>
        deepStrictEqual(deflateOptions(6, length), {
          level: 6,
          windowBits,
          memLevel,
        }),
    );
  }
});

Deno.test("gzipStream() deflates a long stream chunk by chunk, held to pages of output", async () => {
  const body = text(300_000);
  const pieces = Array.from(
    { length: 30 },
    (_, i) => body.subarray(i * 10_000, (i + 1) * 10_000),
  );
  const parts = await collect(
    gzipStream(ReadableStream.from(pieces), {
      level: 1,
      length: null,
      flush: false,
    }),
  );
  deepStrictEqual(gunzipSync(joined(parts)), Buffer.from(body));
  ok(parts.length > 1, "sent as it is made");
  for (const part of parts.slice(0, -1)) {
    ok(part.length >= 4096, `a part of ${part.length}`);
  }
});

Deno.test("gzipStream() reads a short body of known length whole: one part", async () => {
  const body = text(5_000);
  const pieces = [body.subarray(0, 2000), body.subarray(2000)];
  const parts = await collect(
    gzipStream(ReadableStream.from(pieces), {
      level: 6,
      length: 5_000,
      flush: false,
    }),
  );
  strictEqual(parts.length, 1);
  deepStrictEqual(gunzipSync(parts[0]!), Buffer.from(body));
});

Deno.test("gzipStream() with flush sends what each chunk gives at once (proxy_buffering off)", async () => {
  const events = ["data: one\n\n", "data: two\n\n", "data: three\n\n"].map(
    encode,
  );
  const taken = events.map(() => Promise.withResolvers<void>());
  let sent = 0;
  // The source gives the next event only after the client has the last one.
  const source = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === events.length) return controller.close();
      if (sent > 0) await taken[sent - 1]!.promise;
      controller.enqueue(events[sent++]!);
    },
  }, { highWaterMark: 0 });
  const reader = gzipStream(source, { level: 1, length: null, flush: true })
    .getReader();
  const seen: Uint8Array[] = [];
  let want = "";
  for (let i = 0; i < events.length; i++) {
    const { value } = await reader.read();
    seen.push(value!);
    want += new TextDecoder().decode(events[i]!);
    // What came so far inflates to every event so far.
    const inflated = gunzipSync(joined(seen), {
      finishFlush: constants.Z_SYNC_FLUSH,
    });
    strictEqual(new TextDecoder().decode(inflated), want);
    taken[i]!.resolve();
  }
  const rest: Uint8Array[] = [];
  for (let i = 0; i < 10; i++) {
    const { done, value } = await reader.read();
    if (done) break;
    rest.push(value);
  }
  strictEqual(
    new TextDecoder().decode(gunzipSync(joined([...seen, ...rest]))),
    want,
  );
});

Deno.test("gzipStream() cancelled by the client cancels its source", async () => {
  const cancelled = Promise.withResolvers<unknown>();
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(text(50_000));
    },
    cancel(reason) {
      cancelled.resolve(reason);
    },
  }, { highWaterMark: 0 });
  const reader = gzipStream(source, { level: 1, length: null, flush: false })
    .getReader();
  await reader.read();
  await reader.cancel("client left");
  strictEqual(await cancelled.promise, "client left");
});

Deno.test("gzipStream() fails when its source fails", async () => {
  let n = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (n++ === 2) return controller.error(new Error("upstream reset"));
      controller.enqueue(text(10_000));
    },
  }, { highWaterMark: 0 });
  const reader = gzipStream(source, { level: 1, length: null, flush: false })
    .getReader();
  let error: unknown = null;
  for (let i = 0; i < 10 && error === null; i++) {
    try {
      const { done } = await reader.read();
      if (done) break;
    } catch (e) {
      error = e;
    }
  }
  strictEqual((error as Error).message, "upstream reset");
});
