import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import {
  BodyDeadlines,
  ChunkSource,
  StreamedRead,
} from "../../src/proxy/chunk_source.ts";
import { sendBody } from "../../src/upstream/request_body.ts";

/** A body that yields `chunks` and then either ends or stalls. */
function body(chunks: string[], end: boolean): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) {
        controller.enqueue(new TextEncoder().encode(chunks[i++]));
      } else if (end) controller.close();
      // else: stalls until cancelled
    },
  });
}

Deno.test("BodyDeadlines: a stalled body is cancelled at client_body_timeout, a flowing one is read whole", async (t) => {
  // [chunks, ends, timeout ms, what is read, timed out]
  const cases: [string[], boolean, number, string[], boolean][] = [
    [["a", "b"], true, 60_000, ["a", "b"], false],
    [[], true, 60_000, [], false],
    [["a"], false, 0, ["a"], true],
    [[], false, 0, [], true],
  ];
  for (const [chunks, ends, timeoutMs, read, timedOut] of cases) {
    await t.step(
      `${chunks.length} chunks, ${ends ? "ends" : "stalls"}, ${timeoutMs} ms`,
      async () => {
        const deadlines = new BodyDeadlines();
        const source = new ChunkSource(body(chunks, ends), {
          timeoutMs,
          small: true,
        });
        deadlines.watch(source);
        const got: string[] = [];
        // Bounded: one read per chunk and the end.
        for (let i = 0; i <= chunks.length; i++) {
          const value = await source.read();
          if (value === null) break;
          got.push(new TextDecoder().decode(value));
        }
        deadlines.unwatch(source);
        deadlines.stop();
        deepStrictEqual(got, read);
        strictEqual(source.timedOut, timedOut);
      },
    );
  }
});

Deno.test("BodyDeadlines: a body taken out from any place is never expired, every other one is", async (t) => {
  // [bodies watched, the ones taken out before the tick, in that order]
  const cases: [number, number[]][] = [
    [5, [2]],
    [5, [0]],
    [5, [4]],
    [5, [1, 3]],
    [5, [4, 0, 2]],
    [6, [0, 1, 2, 3, 4]],
    [3, [1, 1]],
    [1, []],
  ];
  for (const [count, out] of cases) {
    await t.step(
      `${count} watched, ${out.join(",") || "none"} out`,
      async () => {
        const deadlines = new BodyDeadlines();
        const expired: number[] = [];
        const kept = count - new Set(out).size;
        const { promise: allExpired, resolve } = Promise.withResolvers<void>();
        const bodies = Array.from({ length: count }, (_, i) => ({
          lastRead: 0,
          timeoutMs: 0,
          deadlineSlot: -1,
          expire() {
            expired.push(i);
            if (expired.length === kept) resolve();
          },
        }));
        for (const b of bodies) deadlines.watch(b);
        // Watching twice keeps one entry.
        deadlines.watch(bodies[0]!);
        strictEqual(deadlines.size, count);
        for (const i of out) deadlines.unwatch(bodies[i]!);
        strictEqual(deadlines.size, kept);
        // Every body left is past its timeout: one tick expires them all.
        if (kept > 0) await allExpired;
        deadlines.stop();
        deepStrictEqual(
          expired.sort((a, b) => a - b),
          bodies.map((_, i) => i).filter((i) => !out.includes(i)),
        );
        strictEqual(deadlines.size, 0);
        deepStrictEqual(
          bodies.map((b) => b.deadlineSlot),
          bodies.map(() => -1),
        );
      },
    );
  }
});

/** A byte stream (as Deno.serve's body) that yields `chunks`, then ends or stalls. */
function byteBody(chunks: string[], end: boolean): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const view = controller.byobRequest!.view as Uint8Array;
      if (i < chunks.length) {
        const bytes = new TextEncoder().encode(chunks[i++]);
        view.set(bytes);
        controller.byobRequest!.respond(bytes.length);
      } else if (end) {
        controller.close();
        controller.byobRequest!.respond(0);
      }
      // else: stalls until cancelled
    },
  });
}

Deno.test("StreamedRead: only a wait for the client's bytes is timed, not a write upstream between two reads", async (t) => {
  // [stream kind, chunks, ends, what is written, timed out]
  const cases: [string, string[], boolean, string[], boolean][] = [
    [
      "plain",
      ["a", "b"],
      true,
      ["1\r\na\r\n", "1\r\nb\r\n", "0\r\n\r\n"],
      false,
    ],
    ["plain", ["a"], false, ["1\r\na\r\n"], true],
    ["plain", [], false, [], true],
    [
      "bytes",
      ["a", "b"],
      true,
      ["1\r\na\r\n", "1\r\nb\r\n", "0\r\n\r\n"],
      false,
    ],
    ["bytes", ["a"], false, ["1\r\na\r\n"], true],
  ];
  for (const [kind, chunks, ends, written, timedOut] of cases) {
    await t.step(
      `${kind}, ${chunks.length} chunks, ${ends ? "ends" : "stalls"}`,
      async () => {
        const deadlines = new BodyDeadlines();
        // client_body_timeout 0: any wait that sees a tick of the
        // deadlines passes it.
        const timer = new StreamedRead(0, deadlines);
        const stream = kind === "plain"
          ? body(chunks, ends)
          : byteBody(chunks, ends);
        const writes: string[] = [];
        const sending = sendBody(stream, {
          chunked: true,
          // Each write lasts a tick of the deadlines (a body of its own
          // expires then): one that timed the write would expire with it.
          write: async (bytes) => {
            writes.push(new TextDecoder().decode(bytes));
            const tick = Promise.withResolvers<void>();
            deadlines.watch({
              lastRead: 0,
              timeoutMs: 0,
              deadlineSlot: -1,
              expire: () => tick.resolve(),
            });
            await tick.promise;
          },
          onReadError: (error) =>
            new Error(timer.timedOut ? "timed out" : "gone", { cause: error }),
          timer,
        });
        if (timedOut) await rejects(sending, /^Error: timed out$/);
        else await sending;
        deadlines.stop();
        deepStrictEqual(writes, written);
        strictEqual(timer.timedOut, timedOut);
      },
    );
  }
});
