import { strictEqual } from "node:assert/strict";
import { evalWithGatewayV8Flags } from "./_utils.ts";
import { HeapPacer } from "../src/heap_pacer.ts";

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
        heapUsed: () => used,
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
  const pacer = new HeapPacer({ collect: null, heapUsed: () => 1e12 });
  strictEqual(pacer.active, false);
  strictEqual(pacer.check(), false);
  pacer.start();
  pacer.stop();
});

Deno.test("HeapPacer collects in a process run with the gateway's V8 flags", async () => {
  const code = `import { HeapPacer } from ${
    JSON.stringify(new URL("../src/heap_pacer.ts", import.meta.url).href)
  };
const pacer = new HeapPacer({ slackBytes: 1024 * 1024 });
pacer.check();
let keep = [];
for (let i = 0; i < 200_000; i++) keep.push({ i });
const collected = pacer.check();
keep = null;
console.log(pacer.active, collected);`;
  const out = await evalWithGatewayV8Flags(code);
  strictEqual(out.stderr, "");
  strictEqual(out.stdout.trim(), "true true");
});
