/**
 * Runs the whole suite (`deno task test`): `deno test` over the six shards
 * (`tests/_shards/`), with a temporary folder of its own as `TMPDIR`, then
 * fails the run when the suite left anything behind: a file or folder in
 * that temporary folder (a test's folder not removed, or logs a gateway
 * wrote beside a configuration not in a prefix of its own), a new entry in
 * the project folder (its `logs/`) or `/`, or a change below Debian's nginx paths
 * (`/var/log/nginx`, `/var/lib/nginx`: a test's nginx using its built-in
 * access log or temporary folders). Each of these works as root and fails
 * as any other user, or mixes one run's files into another's; the suite
 * runs as root on CI, so this is where such a test is caught.
 *
 * Arguments are passed on to `deno test` (`--no-check`, `--filter x`).
 *
 * @module
 */
import { join } from "node:path";

/** Paths outside the suite's temporary folder that no test may change. */
const WATCHED = ["/var/log/nginx", "/var/lib/nginx"];

const project = new URL("..", import.meta.url).pathname;

/**
 * What a folder holds, recursively: each path with its size and change
 * time, so a file written, grown or made and removed again shows.
 */
function snapshot(root: string, depth = 3): Map<string, string> {
  const seen = new Map<string, string>();
  const walk = (path: string, left: number) => {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch {
      return;
    }
    seen.set(path, `${info.size} ${info.mtime?.getTime()}`);
    if (!info.isDirectory || left === 0) return;
    try {
      for (const entry of Deno.readDirSync(path)) {
        walk(join(path, entry.name), left - 1);
      }
    } catch {
      // Not readable by this user: its change time above still shows.
    }
  };
  walk(root, depth);
  return seen;
}

function changed(
  before: Map<string, string>,
  after: Map<string, string>,
): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((p) => before.get(p) !== after.get(p)).sort();
}

/**
 * Folders where no test may add an entry: its files belong in its own. Not
 * /tmp: other work on a shared machine adds entries there meanwhile, and a
 * test's file meant for /tmp lands in the suite's `TMPDIR`, checked above.
 */
const NO_NEW_ENTRIES = [project, "/"];

function names(folder: string): Set<string> {
  try {
    return new Set([...Deno.readDirSync(folder)].map((e) => e.name));
  } catch {
    return new Set();
  }
}

const tmp = Deno.makeTempDirSync({ prefix: "station-gateway-suite-" });
// As /tmp: tests that run nginx as another user (nobody) reach their folders.
Deno.chmodSync(tmp, 0o1777);
const shards = [...Deno.readDirSync(join(project, "tests", "_shards"))]
  .map((e) => e.name)
  .filter((name) => /^shard_\d+\.ts$/.test(name))
  .sort()
  .map((name) => join(project, "tests", "_shards", name));
const watchedBefore = WATCHED.map((path) => snapshot(path));
const namesBefore = NO_NEW_ENTRIES.map(names);

// Ctrl-C reaches `deno test` too (one process group): this process waits
// for it to end and still removes the folder.
const interrupted = () => {};
Deno.addSignalListener("SIGINT", interrupted);
const status = await new Deno.Command(Deno.execPath(), {
  args: [
    "test",
    "--allow-net",
    "--allow-read",
    "--allow-write",
    "--allow-run",
    "--allow-env",
    "--allow-sys",
    "--unstable-no-legacy-abort",
    "--parallel",
    ...shards,
    ...Deno.args,
  ],
  cwd: project,
  env: { TMPDIR: tmp, DENO_JOBS: "6" },
}).spawn().status;
Deno.removeSignalListener("SIGINT", interrupted);

const left = [...Deno.readDirSync(tmp)].map((e) => join(tmp, e.name));
const touched = WATCHED.flatMap((path, i) =>
  changed(watchedBefore[i]!, snapshot(path))
);
const added = NO_NEW_ENTRIES.flatMap((folder, i) =>
  [...names(folder)].filter((name) => !namesBefore[i]!.has(name))
    .map((name) => join(folder, name))
);
Deno.removeSync(tmp, { recursive: true });

const problems = [
  ...left.map((p) => `left in the suite's temporary folder: ${p}`),
  ...touched.map((p) => `changed outside the suite's folders: ${p}`),
  ...added.map((p) => `made outside the suite's temporary folder: ${p}`),
];
for (const problem of problems) {
  // deno-lint-ignore no-console
  console.error(`error: ${problem}`);
}
if (problems.length > 0) {
  // deno-lint-ignore no-console
  console.error(
    "error: the suite must leave nothing behind (tests/README.md, **Folders of its own**)",
  );
}
Deno.exit(status.success && problems.length === 0 ? 0 : status.code || 1);
