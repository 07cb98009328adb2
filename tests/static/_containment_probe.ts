/**
 * Run by `containment_witness_test.ts` in a child with `--allow-all`, the
 * only permission under which Deno lets a process read `/proc/self/fd`, so
 * the Linux `kernel` witness is what is tested whatever the test run's own
 * permissions. Argument: the case. Prints one JSON line: the witness, and
 * what `openInsideRoot` answered and whether an outside byte came out.
 *
 * The folder `lib` below the root is swapped for a symlink to an outside
 * folder at exact points by wrapping the runtime calls the check makes:
 *
 * - `readlink-fails`: the kernel cannot be asked (`readlink` errs) while the
 *   folder is a link at the open and the `lstat`, and real at `realpath`.
 * - `between-opens`: a link at the first open, real again at the second.
 * - `race`: a worker swaps the folder as fast as it can while the checks
 *   run, and a gateway in this process (`startGateway`: the engine's
 *   static location, `serveFile` with its cache) answers requests for the
 *   file, for a few seconds.
 *
 * @module
 */
import { join } from "node:path";
import * as containment from "../../src/static/containment.ts";
import { refusedPort, startGateway } from "../_utils.ts";

const dir = Deno.makeTempDirSync();
const root = join(dir, "html");
const lib = join(root, "lib");
const aside = join(root, ".inside");
const outside = join(dir, "secret");
const file = join(lib, "a.js");
Deno.mkdirSync(lib, { recursive: true });
Deno.mkdirSync(outside);
Deno.writeTextFileSync(file, "I".repeat(2048));
Deno.writeTextFileSync(join(outside, "a.js"), "X".repeat(2048));

const toLink = () => {
  Deno.renameSync(lib, aside);
  Deno.symlinkSync(outside, lib);
};
const toReal = () => {
  Deno.removeSync(lib);
  Deno.renameSync(aside, lib);
};

/** What one `openInsideRoot` gave: its kind, and `leak` for outside bytes. */
function attempt(): string {
  const opened = containment.openInsideRoot(root, file);
  if (opened.kind !== "opened") return opened.kind;
  const first = new Uint8Array(1);
  opened.file.readSync(first);
  opened.file.close();
  return first[0] === "X".charCodeAt(0) ? "leak" : "opened";
}

const counts: Record<string, number> = {};
const count = (key: string) => counts[key] = (counts[key] ?? 0) + 1;
const mode = Deno.args[0];
const real = {
  openSync: Deno.openSync,
  readLinkSync: Deno.readLinkSync,
  realPathSync: Deno.realPathSync,
};
const runtime = Deno as unknown as Record<string, unknown>;
try {
  if (mode === "readlink-fails") {
    runtime.readLinkSync = (path: string | URL) => {
      if (String(path).startsWith("/proc/")) throw new Error("EMFILE");
      return real.readLinkSync(path);
    };
    runtime.realPathSync = (path: string | URL) => {
      if (String(path) !== file) return real.realPathSync(path);
      toReal();
      try {
        return real.realPathSync(path);
      } finally {
        toLink();
      }
    };
    toLink();
    count(attempt());
    toReal();
  } else if (mode === "between-opens") {
    runtime.openSync = (path: string | URL, options?: Deno.OpenOptions) => {
      const opened = real.openSync(path, options);
      if (String(path) === file) toReal();
      return opened;
    };
    toLink();
    count(attempt());
  } else if (mode === "race") {
    const worker = new Worker(
      new URL("../_swapper_worker.ts", import.meta.url),
      { type: "module" },
    );
    const done = new Promise<{ swaps: number }>((resolve) => {
      worker.onmessage = (e) => resolve(e.data);
    });
    worker.postMessage({
      target: lib,
      inside: aside,
      outside,
      kind: "dir",
      maxSwaps: 10_000_000,
      maxMs: 20_000,
    });
    // Requests start only once the swapper is seen at work.
    const seen = Date.now() + 10_000;
    while (!exists(aside) && Date.now() < seen) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root,
    });
    const end = Date.now() + Number(Deno.args[1] ?? 3000);
    while (Date.now() < end) {
      for (let i = 0; i < 50; i++) count(attempt());
      for (let i = 0; i < 20; i++) {
        const response = await fetch(`${gw.url}/lib/a.js`);
        const body = await response.text();
        count(body.includes("X") ? "leak" : `status ${response.status}`);
      }
    }
    worker.postMessage("stop");
    counts.swaps = (await done).swaps;
    worker.terminate();
  }
} finally {
  Object.assign(Deno, real);
  Deno.removeSync(dir, { recursive: true });
}
const line = JSON.stringify({
  witness: containment.CONTAINMENT_WITNESS,
  counts,
});
Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
