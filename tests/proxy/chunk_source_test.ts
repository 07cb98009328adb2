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
