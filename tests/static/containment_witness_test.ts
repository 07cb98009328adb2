/**
 * The Linux `kernel` witness of `openInsideRoot()` decides on the open
 * descriptors alone, never falling back to the path check. Deno lets only
 * an `--allow-all` process read `/proc/self/fd`, so the cases run in such a
 * child (`_containment_probe.ts`) whatever this run's permissions, and a
 * folder on the path is swapped for a link at exact points.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { CONTAINMENT_WITNESS } from "../../src/static/containment.ts";

const LINUX = Deno.build.os === "linux";

interface ProbeResult {
  witness: string;
  counts: Record<string, number>;
}

/** Runs the cases in one child (a `deno run` costs about 0.3 s of CPU). */
async function probe(...cases: string[]): Promise<ProbeResult[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      new URL("./_containment_probe.ts", import.meta.url).pathname,
      ...cases,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr);
  strictEqual(code, 0, err);
  strictEqual(err, "");
  const lines = new TextDecoder().decode(stdout).trim().split("\n");
  strictEqual(lines.length, cases.length);
  return lines.map((l) => JSON.parse(l));
}

Deno.test(
  "CONTAINMENT_WITNESS is the kernel exactly when /proc/self/fd can be read",
  () => {
    let readable = false;
    try {
      readable = Deno.statSync("/proc/self/fd").isDirectory;
    } catch { /* refused without --allow-all, or not there */ }
    strictEqual(CONTAINMENT_WITNESS, LINUX && readable ? "kernel" : "settled");
  },
);

Deno.test(
  "openInsideRoot() with the kernel as witness, in a child with --allow-all",
  { ignore: !LINUX },
  async (t) => {
    const [readlinkFails, betweenOpens, race, list] = await probe(
      "readlink-fails",
      "between-opens",
      "race",
      "list",
    );
    await t.step(
      "it refuses a file when the kernel cannot say where it is",
      () => {
        // The path check would pass here: the folder is a link at the open and
        // the lstat, and real at the realpath in between.
        deepStrictEqual(readlinkFails, {
          witness: "kernel",
          counts: { outside: 1 },
        });
      },
    );
    await t.step(
      "it refuses a folder swapped back between its two opens",
      () => {
        deepStrictEqual(betweenOpens, {
          witness: "kernel",
          counts: { outside: 1 },
        });
      },
    );
    await t.step(
      "readInsideRoot() lists a folder through the kernel's descriptor, and not once it leads outside",
      () => {
        // Read twice (the proof reads before it decides), the outside
        // folder's listing refused; no descriptor left open.
        deepStrictEqual(list, {
          witness: "kernel",
          counts: { "read by fd": 2, "inside a.js": 1, outside: 1 },
        });
      },
    );
    await t.step(
      "a static location serves no outside byte while a folder on the path is swapped",
      () => {
        const { witness, counts } = race!;
        const n = (key: string) => counts[key] ?? 0;
        const seen = JSON.stringify(counts);
        strictEqual(witness, "kernel");
        strictEqual(n("leak"), 0, seen);
        // The swaps really met the checks: some files were found, some
        // refused.
        ok(n("opened") > 0 && n("status 200") > 0, seen);
        ok(n("outside") + n("failed") > 0, seen);
        ok(n("swaps") > 100, seen);
      },
    );
  },
);
