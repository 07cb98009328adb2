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

async function probe(...args: string[]): Promise<ProbeResult> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      new URL("./_containment_probe.ts", import.meta.url).pathname,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr);
  strictEqual(code, 0, err);
  strictEqual(err, "");
  return JSON.parse(new TextDecoder().decode(stdout));
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
  "openInsideRoot() refuses a file when the kernel cannot say where it is",
  { ignore: !LINUX },
  async () => {
    // The path check would pass here: the folder is a link at the open and
    // the lstat, and real at the realpath in between.
    deepStrictEqual(await probe("readlink-fails"), {
      witness: "kernel",
      counts: { outside: 1 },
    });
  },
);

Deno.test(
  "openInsideRoot() refuses a folder swapped back between its two opens",
  { ignore: !LINUX },
  async () => {
    deepStrictEqual(await probe("between-opens"), {
      witness: "kernel",
      counts: { outside: 1 },
    });
  },
);

Deno.test(
  "a static location serves no outside byte while a folder on the path is swapped, with the kernel as witness",
  { ignore: !LINUX },
  async () => {
    const { witness, counts } = await probe("race");
    const n = (key: string) => counts[key] ?? 0;
    const seen = JSON.stringify(counts);
    strictEqual(witness, "kernel");
    strictEqual(n("leak"), 0, seen);
    // The swaps really met the checks: some files were found, some refused.
    ok(n("opened") > 0 && n("status 200") > 0, seen);
    ok(n("outside") + n("failed") > 0, seen);
    ok(n("swaps") > 100, seen);
  },
);
