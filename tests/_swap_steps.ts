/**
 * The containment races made exact: `serveFile` runs with its containment
 * seam (`containmentHook`), which is called before each system call of the
 * file's open and proof (`ContainmentStep` in `src/static/settled_proof.ts`),
 * and a row swaps the served name exactly at the steps it lists: a file
 * replaced by a link to an outside file, a folder on the path exchanged with
 * a link to an outside folder, or the precompressed sidecar swapped; from
 * inside to the link (`to link`) or from the link (`to real`), at one step,
 * or there and back at two, or more; on a file never served (`cold`) or, to
 * the link, on one served before, proved and cached (`warm`, as a station
 * serves its app all day). The calls of the open and the proof are
 * synchronous, so these steps are every point where another process's swap
 * can land; the one await, the wait for a folder to settle, is followed by
 * the whole open and proof again (the rows wait it out, as the static
 * handler does).
 *
 * A row's outcome is what the client would get: `inside` (the swapped
 * name's inside bytes), `plain` (the sidecar refused, the file itself
 * served), `refused` (403 for a name leading outside, or 404 after the
 * wait for a folder to settle), `not reached` (the step never came, the answer
 * was right: a cached copy, a proof remembered), or `leaked`/`wrong`.
 *
 * @module
 */
import { join } from "node:path";
import {
  type ContainmentHook,
  type ContainmentStep,
  serveFile,
  type ServeFileOptions,
  StaticCache,
  type StaticResult,
} from "../src/static/mod.ts";
import { locationConf, requestVars, value } from "./_location_conf.ts";
import { settledRoot } from "./_settled.ts";

/** What is swapped, and how the file is served. */
export type SwapKind = "cached file" | "streamed file" | "folder" | "sidecar";
/** The name goes from inside to the link, or from the link back. */
export type Direction = "to link" | "to real";
/** `before`: swapped before the request, the handler's `stat` included. */
export type SwapAt = ContainmentStep | "before";
/** A file never served, or one served (proved and cached) before. */
export type Memory = "cold" | "warm";

/**
 * The steps a row swaps at, in their order; the kernel witness's
 * (`open-again`, `readlink`) are not this process's: Deno lets only an
 * `--allow-all` process read `/proc/self/fd` (`containment_witness_test.ts`).
 */
export const STEPS: readonly SwapAt[] = [
  "before",
  "open",
  "fstat",
  "folder",
  "entry",
  "root",
  "folder-again",
  "realpath",
  "proved",
];

const IN = "I";
const OUT = "X";
const SIZE = 2048;

/** One row's folder: the served path, and the swap of its name. */
interface Site {
  root: string;
  /** The file opened and proved (the `.gz` for a sidecar). */
  opened: string;
  uri: string;
  toLink(): void;
  toReal(): void;
}

/**
 * Writes row `n`'s folder below `dir`, beside the outside folder `secret`
 * that all rows share (`outsideFiles`). Few folders: on ext4 a folder made
 * costs a search of the inode bitmap, most of these tables' CPU time.
 */
function site(kind: SwapKind, dir: string, n: number): Site {
  const root = join(dir, String(n));
  const outside = join(dir, "secret");
  Deno.mkdirSync(join(root, "lib"), { recursive: true });
  Deno.writeTextFileSync(join(root, "a.settle"), "");
  Deno.writeTextFileSync(join(root, "lib", "a.settle"), "");
  if (kind === "folder") {
    // lib/a.js inside, secret/a.js outside; lib moves aside for the link.
    const lib = join(root, "lib");
    const aside = join(root, ".inside");
    Deno.writeTextFileSync(join(lib, "a.js"), IN.repeat(SIZE));
    return {
      root,
      opened: join(lib, "a.js"),
      uri: "/lib/a.js",
      toLink: () => {
        Deno.renameSync(lib, aside);
        Deno.symlinkSync(outside, lib);
      },
      toReal: () => {
        Deno.removeSync(lib);
        Deno.renameSync(aside, lib);
      },
    };
  }
  // The file (or its .gz) is a hard link of a hidden inside file, and a
  // link to the outside file or that file again is renamed over it.
  // Below lib/, so that the proof has a folder to look at twice.
  const name = kind === "sidecar" ? "app.js.gz" : "app.js";
  const target = join(root, "lib", name);
  const inside = join(root, "lib", `.inside-${name}`);
  Deno.writeTextFileSync(inside, IN.repeat(SIZE));
  Deno.linkSync(inside, target);
  if (kind === "sidecar") {
    Deno.writeTextFileSync(join(root, "lib", "app.js"), IN.repeat(SIZE));
  }
  return {
    root,
    opened: target,
    uri: "/lib/app.js",
    toLink: () => {
      Deno.symlinkSync(join(outside, name), `${target}.link`);
      Deno.renameSync(`${target}.link`, target);
    },
    toReal: () => {
      Deno.linkSync(inside, `${target}.real`);
      Deno.renameSync(`${target}.real`, target);
    },
  };
}

/**
 * One row: a kind of swap, its first direction, the memory, and the steps
 * the name flips at, in order (the first to `direction`, the next back).
 */
export interface Row {
  kind: SwapKind;
  direction: Direction;
  memory: Memory;
  at: readonly SwapAt[];
}

/** A row's name in a table: each flip, to the direction and back. */
export function rowName(r: Row): string {
  const flips = r.at.map((at, i) =>
    i % 2 === 0 ? `${r.direction} at ${at}` : `back at ${at}`
  );
  return `${r.kind}, ${r.memory}, ${flips.join(", ")}`;
}

/** Serves the row's file once; a folder still settling is waited for. */
async function serve(
  s: Site,
  kind: SwapKind,
  extra: { cache: StaticCache | undefined; hook?: ContainmentHook },
): Promise<{ status: number; body: string; gzip: boolean }> {
  const req = new Request(`http://localhost${s.uri}`, {
    headers: kind === "sidecar" ? { "accept-encoding": "gzip" } : {},
  });
  const conf = locationConf({
    root: value(s.root),
    gzipStatic: kind === "sidecar" ? "on" : "off",
  });
  // Bounded: a folder settles within about a second of its last change,
  // and a row changes it at most four times.
  for (let attempt = 0; attempt < 8; attempt++) {
    const options: ServeFileOptions = {
      path: join(s.root, ...s.uri.split("/")),
      root: s.root,
      conf,
      uri: s.uri,
      vars: requestVars(req, { serverPort: 80 }),
    };
    if (extra.cache !== undefined) options.cache = extra.cache;
    if (extra.hook !== undefined) options.containmentHook = extra.hook;
    const result: StaticResult = serveFile(req, options);
    const { response } = result;
    if (result.retryInMs === undefined) {
      return {
        status: response.status,
        body: await response.text(),
        gzip: response.headers.get("content-encoding") === "gzip",
      };
    }
    await response.body?.cancel();
    // The static handler's own wait (request/static_handler.ts): the
    // folder's change time has to age, which no event announces.
    await new Promise((r) => setTimeout(r, result.retryInMs));
  }
  throw new Error(`"${s.uri}" did not settle`);
}

/** What the client got, as the table names it. */
function outcome(
  got: { status: number; body: string; gzip: boolean },
  kind: SwapKind,
): string {
  if (got.body.includes(OUT)) return "leaked";
  if (got.status === 403 || got.status === 404) return "refused";
  if (got.status !== 200 || got.body !== IN.repeat(SIZE)) {
    return `wrong (${got.status})`;
  }
  return kind === "sidecar" && !got.gzip ? "plain" : "inside";
}

/** A table's folders: one per row, and the outside folder all share. */
interface Sites {
  dir: string;
  sites: Site[];
}

/** Writes a table's folders below a new temporary folder. */
function writeSites(rows: readonly Row[]): Sites {
  const dir = Deno.makeTempDirSync();
  const secret = join(dir, "secret");
  Deno.mkdirSync(secret);
  for (const name of ["a.js", "app.js", "app.js.gz"]) {
    Deno.writeTextFileSync(join(secret, name), OUT.repeat(SIZE));
  }
  const sites = rows.map((r, n) => site(r.kind, dir, n));
  // A row "to real" starts with the link in place.
  rows.forEach((r, i) => {
    if (r.direction === "to real") sites[i]!.toLink();
  });
  return { dir, sites };
}

/** Tables written ahead, by their rows' names. */
const ahead = new Map<string, Sites>();
let removesAhead = false;

function tableKey(rows: readonly Row[]): string {
  return rows.map(rowName).join("\n");
}

/**
 * Writes a table's folders now, for {@linkcode swapAtSteps} to take when
 * given the same rows: a file is proved only in folders still for a moment,
 * and Deno reports a folder's change time in whole seconds, which counts as
 * the end of that second (static/settled_proof.ts), so a table written just
 * before its rows waited up to a second first. Called when a test file
 * loads (in a shard, before any of its tests run); a table no test took is
 * removed when the worker unloads.
 *
 * @param rows The rows, as the test will give them.
 */
export function swapSitesAhead(rows: readonly Row[]): void {
  if (!removesAhead) {
    removesAhead = true;
    globalThis.addEventListener("unload", () => {
      for (const { dir } of ahead.values()) {
        try {
          Deno.removeSync(dir, { recursive: true });
        } catch {
          // Removed already.
        }
      }
      ahead.clear();
    });
  }
  ahead.set(tableKey(rows), writeSites(rows));
}

/**
 * Runs every row at once, each in a folder of its own below one temporary
 * folder (the waits for folders to settle overlap), and names each row's
 * outcome.
 *
 * @param rows The rows.
 * @returns Each row's name and outcome, in the rows' order.
 */
export async function swapAtSteps(
  rows: readonly Row[],
): Promise<[string, string][]> {
  const key = tableKey(rows);
  const { dir, sites } = ahead.get(key) ?? writeSites(rows);
  ahead.delete(key);
  // Streamed: without a cache every file is read from its handle.
  const caches = rows.map((r) =>
    r.kind === "streamed file" ? undefined : new StaticCache()
  );
  try {
    // Folders written a moment ago: a file is proved only in folders still
    // for a moment (static/settled_proof.ts).
    await Promise.all(sites.map((s, i) =>
      settledRoot(
        s.root,
        ...(rows[i]!.direction === "to link" ? ["a.settle", "lib/a.settle"] : [
          "a.settle",
        ]),
      )
    ));
    const warm = await Promise.all(
      rows.map((r, i) =>
        r.memory === "warm"
          ? serve(sites[i]!, r.kind, { cache: caches[i] })
          : null
      ),
    );
    rows.forEach((r, i) => {
      const served = warm[i] ?? null;
      if (served !== null && outcome(served, r.kind) !== "inside") {
        throw new Error(`${rowName(r)}: warm-up ${outcome(served, r.kind)}`);
      }
    });
    return await Promise.all(rows.map(async (r, i) => {
      const s = sites[i]!;
      // Flips done; the name is a link after an odd count "to link".
      let flips = 0;
      const flip = () => {
        const toLink = (flips % 2 === 0) === (r.direction === "to link");
        (toLink ? s.toLink : s.toReal)();
        flips++;
      };
      if (r.at[0] === "before") flip();
      // The file the steps are about: set at each open.
      let current = "";
      const hook: ContainmentHook = (step, path) => {
        if (step === "open") current = path;
        if (step === r.at[flips] && current === s.opened) flip();
      };
      const got = await serve(s, r.kind, { cache: caches[i], hook });
      const seen = outcome(got, r.kind);
      // A step that never came hides only a right answer.
      const right = seen === "refused" || seen === "inside" ||
        seen === "plain";
      const reached = flips === r.at.length || !right;
      return [rowName(r), reached ? seen : "not reached"];
    }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The letters of a grid: refused, inside, plain, not reached. */
const LETTERS: Record<string, string> = {
  R: "refused",
  I: "inside",
  P: "plain",
  "-": "not reached",
};

/**
 * The expected table of one kind, from two grids of letters
 * ({@linkcode LETTERS}). `once`: a line per memory and direction (`cold, to
 * link`), a letter per step of {@linkcode STEPS}: the name flips once, at
 * that step. `there and back` (cold, a line per direction and first step):
 * the name flips at the line's step and back at each later step.
 *
 * @param kind The kind of swap.
 * @param grids The two grids.
 * @returns Each row and its outcome.
 */
export function expectedTable(
  kind: SwapKind,
  grids: {
    once: string;
    thereAndBack: string;
    more?: [Direction, SwapAt[], string][];
  },
): { rows: Row[]; expected: [string, string][] } {
  const rows: Row[] = [];
  const expected: [string, string][] = [];
  const add = (row: Row, letter: string) => {
    const outcome = LETTERS[letter];
    if (outcome === undefined) throw new Error(`Cannot read "${letter}"`);
    rows.push(row);
    expected.push([rowName(row), outcome]);
  };
  for (const line of lines(grids.once)) {
    const [memory, direction, letters] = line;
    letters.forEach((l, i) =>
      add({ kind, memory, direction, at: [STEPS[i]!] }, l)
    );
  }
  for (const line of lines(grids.thereAndBack)) {
    const [memory, direction, letters, first] = line;
    const from = STEPS.indexOf(first!);
    letters.forEach((l, i) =>
      add({ kind, memory, direction, at: [first!, STEPS[from + 1 + i]!] }, l)
    );
  }
  for (const [direction, at, l] of grids.more ?? []) {
    add({ kind, memory: "cold", direction, at }, l);
  }
  return { rows, expected };
}

/** A grid's lines: `memory, direction[, step]: letters`. */
function lines(
  grid: string,
): [Memory, Direction, string[], SwapAt | undefined][] {
  const text = grid.trim();
  return text === "" ? [] : text.split("\n").map((line) => {
    const [head, letters] = line.split(":");
    const [memory, direction, step] = head!.split(",").map((p) => p.trim());
    return [
      memory as Memory,
      direction as Direction,
      letters!.trim().split(/\s+/),
      step as SwapAt | undefined,
    ];
  });
}
