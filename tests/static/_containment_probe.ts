/**
 * Run by `containment_witness_test.ts` in a child with `--allow-all`, the
 * only permission under which Deno lets a process read `/proc/self/fd`, so
 * the Linux `kernel` witness is what is tested whatever the test run's own
 * permissions. Arguments: the cases, run one after another, each on a
 * folder of its own and with the runtime's calls restored after it (one
 * process for all: a `deno run` costs about 0.3 s of CPU). Prints one JSON
 * line per case: the witness, and what `openInsideRoot` answered and
 * whether an outside byte came out.
 *
 * The folder `lib` below the root is swapped for a symlink to an outside
 * folder at exact points by wrapping the runtime calls the check makes:
 *
 * - `readlink-fails`: the kernel cannot be asked (`readlink` errs) while the
 *   folder is a link at the open and the `lstat`, and real at `realpath`.
 * - `between-opens`: a link at the first open, real again at the second.
 * - `list`: `readInsideRoot` reads the folder `lib` through the kernel's
 *   descriptor while it is real, and refuses it once it is a link to the
 *   outside folder; the descriptors open before and after are counted.
 * - `race`: a worker swaps the folder a few times per check while the
 *   checks run, and a gateway in this process (`startGateway`: the engine's
 *   static location, `serveFile` with its cache) answers requests for the
 *   file, until each outcome (opened, served, refused) was seen 100 times.
 *
 * @module
 */
import { join } from "node:path";
import * as containment from "../../src/static/containment.ts";
import { refusedPort, startGateway } from "../_utils.ts";

/** A case's folders: `lib` below the root, and an outside folder. */
interface Tree {
  dir: string;
  root: string;
  lib: string;
  aside: string;
  outside: string;
  file: string;
}

function makeTree(): Tree {
  const dir = Deno.makeTempDirSync();
  const root = join(dir, "html");
  const lib = join(root, "lib");
  const tree = {
    dir,
    root,
    lib,
    aside: join(root, ".inside"),
    outside: join(dir, "secret"),
    file: join(lib, "a.js"),
  };
  Deno.mkdirSync(lib, { recursive: true });
  Deno.mkdirSync(tree.outside);
  Deno.writeTextFileSync(tree.file, "I".repeat(2048));
  Deno.writeTextFileSync(join(tree.outside, "a.js"), "X".repeat(2048));
  return tree;
}

const toLink = ({ lib, aside, outside }: Tree) => {
  Deno.renameSync(lib, aside);
  Deno.symlinkSync(outside, lib);
};
const toReal = ({ lib, aside }: Tree) => {
  Deno.removeSync(lib);
  Deno.renameSync(aside, lib);
};

/** What one `openInsideRoot` gave: its kind, and `leak` for outside bytes. */
function attempt({ root, file }: Tree): string {
  const opened = containment.openInsideRoot(root, file);
  if (opened.kind !== "opened") return opened.kind;
  const first = new Uint8Array(1);
  opened.file.readSync(first);
  opened.file.close();
  return first[0] === "X".charCodeAt(0) ? "leak" : "opened";
}

/** Swaps granted for each check or request of the race. */
const SWAPS_PER_CHECK = 4;
/** How often each outcome of the race is seen before it ends. */
const RACES_MET = 100;

const real = {
  openSync: Deno.openSync,
  readLinkSync: Deno.readLinkSync,
  realPathSync: Deno.realPathSync,
};
const runtime = Deno as unknown as Record<string, unknown>;

/** Runs one case on a tree of its own; what it counted. */
async function runCase(mode: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const count = (key: string) => counts[key] = (counts[key] ?? 0) + 1;
  const tree = makeTree();
  const { lib, aside, outside, file, root } = tree;
  try {
    if (mode === "readlink-fails") {
      runtime.readLinkSync = (path: string | URL) => {
        if (String(path).startsWith("/proc/")) throw new Error("EMFILE");
        return real.readLinkSync(path);
      };
      runtime.realPathSync = (path: string | URL) => {
        if (String(path) !== file) return real.realPathSync(path);
        toReal(tree);
        try {
          return real.realPathSync(path);
        } finally {
          toLink(tree);
        }
      };
      toLink(tree);
      count(attempt(tree));
      toReal(tree);
    } else if (mode === "between-opens") {
      runtime.openSync = (path: string | URL, options?: Deno.OpenOptions) => {
        const opened = real.openSync(path, options);
        if (String(path) === file) toReal(tree);
        return opened;
      };
      toLink(tree);
      count(attempt(tree));
    } else if (mode === "list") {
      const open = () => [...Deno.readDirSync("/proc/self/fd")].length;
      const before = open();
      const names = (at: string) => {
        count(at.startsWith("/proc/self/fd/") ? "read by fd" : "read by path");
        return [...Deno.readDirSync(at)].map((e) => e.name).join();
      };
      for (const swap of [() => {}, () => toLink(tree)]) {
        swap();
        const read = containment.readInsideRoot(root, lib, names);
        count(read.kind === "inside" ? `inside ${read.value}` : read.kind);
      }
      toReal(tree);
      if (open() !== before) count("descriptors left open");
    } else if (mode === "race") {
      // Swaps granted per check (_swapper_worker.ts): the swapper waits
      // blocked between grants, so the race costs the same work however
      // slowly a loaded machine runs it.
      const grants = new Int32Array(new SharedArrayBuffer(8));
      const grant = () => {
        Atomics.add(grants, 0, 1);
        Atomics.notify(grants, 0);
      };
      const worker = new Worker(
        new URL("../_swapper_worker.ts", import.meta.url),
        { type: "module" },
      );
      let started = () => {};
      const swapping = new Promise<void>((resolve) => started = resolve);
      const done = new Promise<{ swaps: number }>((resolve) => {
        worker.onmessage = (e) => {
          if (e.data === "started") started();
          else resolve(e.data);
        };
      });
      worker.postMessage({
        target: lib,
        inside: aside,
        outside,
        kind: "dir",
        maxSwaps: 10_000_000,
        maxMs: 60_000,
        budget: { grants, perGrant: SWAPS_PER_CHECK },
      });
      // Checks start only once the swapper is seen at work.
      grant();
      await swapping;
      await using gw = await startGateway({
        upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
        root,
      });
      // Until each outcome was seen often enough, as the races of
      // static_race_test.ts end; the rounds and the time are bounds.
      const n = (key: string) => counts[key] ?? 0;
      const enough = () =>
        n("opened") >= RACES_MET && n("status 200") >= RACES_MET &&
        n("outside") + n("failed") >= RACES_MET;
      const end = Date.now() + 20_000;
      for (
        let round = 0;
        round < 1000 && Date.now() < end && !enough();
        round++
      ) {
        for (let i = 0; i < 50; i++) {
          grant();
          count(attempt(tree));
        }
        for (let i = 0; i < 20; i++) {
          grant();
          const response = await fetch(`${gw.url}/lib/a.js`);
          const body = await response.text();
          count(body.includes("X") ? "leak" : `status ${response.status}`);
        }
      }
      Atomics.store(grants, 1, 1);
      Atomics.notify(grants, 0);
      counts.swaps = (await done).swaps;
      worker.terminate();
    }
  } finally {
    Object.assign(Deno, real);
    await Deno.remove(tree.dir, { recursive: true });
  }
  return counts;
}

for (const mode of Deno.args) {
  const counts = await runCase(mode);
  const line = JSON.stringify({
    witness: containment.CONTAINMENT_WITNESS,
    counts,
  });
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
}
