/**
 * The folder-swap race at scale: another process swaps a folder on a served
 * path with a link to an outside folder (Linux `renameat2(RENAME_EXCHANGE)`,
 * `tests/_exchange_swapper.py`: the link is in place half the time), or a
 * worker thread swaps it portably (`worker`, `tests/_swapper_worker.ts`),
 * while this thread asks `openInsideRoot()` for the file below it, with the
 * permissions the gateway runs with, and reads what each opened handle
 * holds. Prints the counts; any outside byte is a leak (exit 1).
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-run scripts/containment_race.ts               # 1,000,000 opens
 * deno run --allow-read --allow-write --allow-run scripts/containment_race.ts 200000 worker  # portable swapper
 * ```
 *
 * @module
 */
import { join } from "node:path";
import {
  CONTAINMENT_WITNESS,
  openInsideRoot,
} from "../src/static/containment.ts";

const total = Number(Deno.args[0] ?? 1_000_000);
const swapper = Deno.args[1] === "worker" ? "worker" : "exchange";
const dir = Deno.makeTempDirSync();
const root = join(dir, "html");
const lib = join(root, "lib");
const outside = join(dir, "secret");
Deno.mkdirSync(lib, { recursive: true });
Deno.mkdirSync(outside);
Deno.writeTextFileSync(join(lib, "a.js"), "I".repeat(64));
Deno.writeTextFileSync(join(outside, "a.js"), "X".repeat(64));
const link = join(root, ".link");
Deno.symlinkSync(outside, link);

const counts: Record<string, number> = {};
const count = (what: string) => counts[what] = (counts[what] ?? 0) + 1;
const buf = new Uint8Array(64);
/** One open, as the static handler makes it; its outcome counted. */
function attempt(): void {
  const opened = openInsideRoot(root, join(lib, "a.js"));
  if (opened.kind !== "opened") {
    count(opened.kind);
    return;
  }
  try {
    const n = opened.file.readSync(buf) ?? 0;
    count(buf.subarray(0, n).includes(88) ? "leak" : "opened");
  } finally {
    opened.file.close();
  }
}

// Proved once while the folder is still (it just changed: wait for it).
const settle = Date.now() + 3000;
while (!counts.opened && Date.now() < settle) {
  attempt();
  await new Promise((r) => setTimeout(r, 50));
}
const stop = swapper === "worker" ? startWorker() : await startExchange();
const started = Date.now();
for (let i = 0; i < total; i++) {
  attempt();
  // Lets the worker's "stop" and the timers in, every few thousand.
  if (i % 5000 === 0) await new Promise((r) => setTimeout(r, 0));
}
const swaps = await stop();
Deno.removeSync(dir, { recursive: true });
const report = JSON.stringify({
  witness: CONTAINMENT_WITNESS,
  swapper,
  attempts: total,
  seconds: (Date.now() - started) / 1000,
  swaps,
  counts,
});
Deno.stdout.writeSync(new TextEncoder().encode(report + "\n"));
if (counts.leak) Deno.exit(1);

/** The portable swapper: a worker thread; returns its stop. */
function startWorker(): () => Promise<number> {
  const worker = new Worker(
    new URL("../tests/_swapper_worker.ts", import.meta.url),
    { type: "module" },
  );
  const done = new Promise<{ swaps: number }>((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
  });
  worker.postMessage({
    target: lib,
    inside: join(root, ".inside"),
    outside,
    kind: "dir",
    maxSwaps: 1e9,
    maxMs: 3_600_000,
  });
  return async () => {
    worker.postMessage("stop");
    const { swaps } = await done;
    worker.terminate();
    return swaps;
  };
}

/** The exchanging swapper, once it has swapped; returns its stop. */
async function startExchange(): Promise<() => Promise<number>> {
  const child = new Deno.Command("python3", {
    args: [
      new URL("../tests/_exchange_swapper.py", import.meta.url).pathname,
      lib,
      link,
      "3600",
    ],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read(); // "ready"
  return async () => {
    child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();
    return -1;
  };
}
