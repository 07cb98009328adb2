import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { DEFAULT_GC_EVERY_BYTES, GcPacer } from "../src/gc_pacer.ts";

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
  // The gateway runs with --expose-gc (scripts/compile.ts); this process
  // need not, so ask a child started with the same V8 flags.
  const { COMPILE_FLAGS } = await import("../scripts/compile.ts");
  const v8 = COMPILE_FLAGS.find((f) => f.startsWith("--v8-flags="))!;
  const code = `import { GcPacer } from ${
    JSON.stringify(new URL("../src/gc_pacer.ts", import.meta.url).href)
  };
const pacer = new GcPacer({ everyBytes: 1 });
pacer.add(1);
console.log(pacer.active);`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", v8, code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(new TextDecoder().decode(out.stderr), "");
  strictEqual(new TextDecoder().decode(out.stdout).trim(), "true");
});
