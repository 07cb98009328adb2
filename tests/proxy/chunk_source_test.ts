import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BodyDeadlines, ChunkSource } from "../../src/proxy/chunk_source.ts";

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
