import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { evalWithGatewayV8Flags } from "../_utils.ts";
import { DEFAULT_GC_EVERY_BYTES, GcPacer } from "../../src/runtime/gc_pacer.ts";

for (
  const [chunks, expected] of [
    [[1, 2], 0],
    [[1, 2, 3], 1],
    [[4], 1],
    [[3, 1], 1],
    [[3, 2, 3], 1],
    [[3, 2, 3, 1], 2],
    [[40], 1],
    [[40, 4], 2],
    [[2, 2, 2, 2, 2, 2, 2, 2], 4],
  ] as const
) {
  Deno.test(`GcPacer collects ${expected} times for chunks of ${chunks.join(", ")} bytes every 4`, () => {
    const kinds: string[] = [];
    const pacer = new GcPacer({
      everyBytes: 4,
      collect: (options) => kinds.push(options.type),
    });
    for (const n of chunks) pacer.add(n);
    deepStrictEqual(kinds, Array(expected).fill("minor"));
  });
}

Deno.test("GcPacer does nothing without a collector", () => {
  const pacer = new GcPacer({ everyBytes: 1, collect: null });
  strictEqual(pacer.active, false);
  pacer.add(DEFAULT_GC_EVERY_BYTES * 10);
});

Deno.test("GcPacer uses V8's gc() when the run flags expose it", async () => {
  const code = `import { GcPacer } from ${
    JSON.stringify(
      new URL("../../src/runtime/gc_pacer.ts", import.meta.url).href,
    )
  };
const pacer = new GcPacer({ everyBytes: 1 });
pacer.add(1);
console.log(pacer.active);`;
  const out = await evalWithGatewayV8Flags(code);
  strictEqual(out.stderr, "");
  strictEqual(out.stdout.trim(), "true");
});
