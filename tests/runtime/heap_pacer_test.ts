import { strictEqual } from "node:assert/strict";
import { evalWithGatewayV8Flags } from "../_utils.ts";
import { HeapPacer, oldGenerationUsed } from "../../src/runtime/heap_pacer.ts";

Deno.test("HeapPacer.check() collects when the heap outgrew the floor by the slack", async (t) => {
  // [survivors: the heap right after a collection, [heap used at each
  // check, whether that check collects]]; the slack is 10.
  const cases: [string, number, [number, boolean][]][] = [
    ["growth within the slack", 100, [[100, false], [110, false], [
      108,
      false,
    ]]],
    ["growth past the slack", 100, [[100, false], [111, true], [105, false]]],
    ["V8's own collection lowers the floor", 90, [
      [120, false],
      [90, false],
      [101, true],
    ]],
    ["live data that grew is the floor after one collection", 300, [
      [100, false],
      [300, true],
      [305, false],
      [311, true],
    ]],
  ];
  for (const [name, survivors, steps] of cases) {
    await t.step(name, () => {
      let used = 0;
      let collections = 0;
      const pacer = new HeapPacer({
        slackBytes: 10,
        collect: (options) => {
          strictEqual(options.type, "major");
          collections++;
          used = survivors;
        },
        oldGenerationUsed: () => used,
      });
      for (const [at, collects] of steps) {
        used = at;
        const before = collections;
        strictEqual(pacer.check(), collects, `at ${at}`);
        strictEqual(collections - before, collects ? 1 : 0);
      }
    });
  }
});

Deno.test("HeapPacer does nothing without a collector", () => {
  const pacer = new HeapPacer({ collect: null, oldGenerationUsed: () => 1e12 });
  strictEqual(pacer.active, false);
  strictEqual(pacer.check(), false);
  pacer.start();
  pacer.stop();
});

Deno.test("oldGenerationUsed() leaves out the young generation's spaces", async (t) => {
  const cases: [string, [string, number][], number][] = [
    ["old spaces are summed", [["old_space", 5], ["code_space", 2], [
      "large_object_space",
      3,
    ]], 10],
    ["young spaces are left out", [["new_space", 4], [
      "new_large_object_space",
      7,
    ], ["old_space", 1]], 1],
    ["nothing in use", [], 0],
  ];
  for (const [name, spaces, expected] of cases) {
    await t.step(name, () => {
      strictEqual(
        oldGenerationUsed(
          spaces.map(([space_name, space_used_size]) => ({
            space_name,
            space_used_size,
          })),
        ),
        expected,
      );
    });
  }
  // V8's own list, as the pacer reads it by default.
  strictEqual(oldGenerationUsed() > 0, true);
});

// Both run in a child process with the gateway's V8 flags (--expose-gc).
const pacerModule = JSON.stringify(
  new URL("../../src/runtime/heap_pacer.ts", import.meta.url).href,
);

Deno.test("HeapPacer collects in a process run with the gateway's V8 flags", async () => {
  const code = `import { HeapPacer } from ${pacerModule};
const pacer = new HeapPacer({ slackBytes: 1024 * 1024 });
pacer.check();
let keep = [];
for (let i = 0; i < 200_000; i++) keep.push({ i });
// Two scavenges move what survives them to the old generation.
gc({ type: "minor" });
gc({ type: "minor" });
const collected = pacer.check();
keep = null;
console.log(pacer.active, collected);`;
  const out = await evalWithGatewayV8Flags(code);
  strictEqual(out.stderr, "");
  strictEqual(out.stdout.trim(), "true true");
});

Deno.test("HeapPacer does not collect for young garbage alone", async () => {
  // The regression: measured with heapUsed, the young generation's fill
  // (up to the 4 MiB semi-space) counted as growth, and a lightly loaded
  // gateway was collected every few seconds.
  const code = `import { HeapPacer } from ${pacerModule};
let collections = 0;
const pacer = new HeapPacer({
  slackBytes: 2 * 1024 * 1024,
  collect: (options) => { collections++; gc(options); },
});
gc({ type: "major" });
pacer.check();
let sink = 0;
for (let round = 0; round < 40; round++) {
  // Objects that die at once: only scavenges ever see them.
  for (let i = 0; i < 50_000; i++) sink += ({ i, s: "x" + i }).s.length > 0 ? 1 : 0;
  pacer.check();
}
console.log(sink, collections);`;
  const out = await evalWithGatewayV8Flags(code);
  strictEqual(out.stderr, "");
  strictEqual(out.stdout.trim(), "2000000 0");
});
