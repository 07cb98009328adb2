/**
 * The containment races of `static_race_test.ts`,
 * `static_race_folder_test.ts` and `static_race_sidecar_test.ts`: a second
 * thread swaps a served file for a symlink to an outside file and back
 * while requests run, and not one outside byte may reach a client. The
 * proof is the tables of `_swap_steps.ts` (a swap at each step of the open
 * and its proof); a race here is a smoke run of the gateway process as a
 * whole, {@linkcode SMOKE_REQUESTS} requests, and `scripts/containment_race.ts`
 * the run at scale.
 *
 * @module
 */
import { join } from "node:path";
import { ok, strictEqual } from "node:assert/strict";
import {
  type GatewayProcess,
  rawRequest,
  refusedPort,
  spawnGateway,
} from "./_utils.ts";
import { KeptAlive } from "./_keep_alive.ts";

/** Whether this process can make symlinks (Windows needs a privilege; Wine cannot). */
function canSymlink(): boolean {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(join(dir, "a"), "a");
    Deno.symlinkSync(join(dir, "a"), join(dir, "b"), { type: "file" });
    return Deno.readTextFileSync(join(dir, "b")) === "a" &&
      Deno.lstatSync(join(dir, "b")).isSymlink;
  } catch {
    return false;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** This process cannot make symlinks: the races are ignored. */
export const NO_LINKS: boolean = !canSymlink();

/**
 * The gateway serving `root` (the flags' built-in static location, its log
 * in `dir`) as a process of its own: in the test's process `--trace-leaks`
 * traced every operation of a race's hundreds of requests, more than
 * doubling its CPU time. The swaps race it through the file system alike.
 */
export function serveRoot(root: string, dir: string): Promise<GatewayProcess> {
  return spawnGateway([
    "--listen",
    "127.0.0.1:0",
    "--upstream",
    `http://127.0.0.1:${refusedPort()}`,
    "--root",
    root,
    "--error-log",
    join(dir, "error.log"),
    "--access-log",
    "off",
  ]);
}

/** One containment race: what is swapped under the root, and what is asked for meanwhile. */
export interface RaceCase {
  /** What is swapped, relative to the root. */
  swapped: string;
  /** The request target. */
  target: string;
  /** Request headers. */
  headers?: Record<string, string>;
  /** Bytes of the inside and outside files (above 256 KiB: streamed). */
  size: number;
  /** A folder on the path is swapped, not the file. */
  folder?: boolean;
}

/** What the inside files are made of. */
export const MARK_IN = "I";
/** What the outside files are made of: one such byte served is a leak. */
export const MARK_OUT = "X";

/**
 * A race ends once swaps have met requests this many times (a refusal, or a
 * sidecar given up for its plain file: the containment check seeing a swap)
 * and as many requests were served, or after its request count: the races
 * met are what prove something, not the requests (most meet no swap).
 */
export const RACES_MET = 100;

/** Whether both outcomes were seen often enough to stop. */
export function metEnough(counts: { served: number; met: number }): boolean {
  return counts.met >= RACES_MET && counts.served >= RACES_MET;
}

/**
 * The requests of a smoke race: enough for the swaps to meet some (a
 * refusal, the sidecar given up), cheap beside the gateway's start.
 */
export const SMOKE_REQUESTS = 200;

/**
 * Swaps granted for each request: the swappers swap while requests run and
 * wait blocked between grants, so a race costs the same work however slowly
 * a loaded machine serves (a swapper spinning freely took a core for as
 * long as the race lasted).
 */
export const SWAPS_PER_REQUEST = 16;

/**
 * The swaps a race must see done before it ends (or its bounds end it): a
 * loaded machine can answer a smoke run's requests before the swapper's
 * thread has run much.
 */
export const MIN_SWAPS = 100;

/** Where the shared array holds the grants, the stop and the swaps done. */
const GRANTS = 0;
const STOP = 1;
const SWAPS = 2;

/** What a race's clients saw. */
export interface RaceResult {
  /** Answers with an outside byte. */
  leaked: number;
  /** 200 answers. */
  served: number;
  /** Other answers. */
  refused: number;
  /** Requests a swap met: refused, or a sidecar given up for its file. */
  met: number;
  /** 200 answers that were not the inside file. */
  wrong: number;
}

/**
 * Runs one race: a gateway process serves a fresh folder while a worker
 * swaps each case's `swapped` for a symlink to an outside file and back in
 * turn, 8 clients asking for the cases' targets in turn until the swaps met
 * {@linkcode RACES_MET} requests or `requests` were sent and the swapper
 * did {@linkcode MIN_SWAPS} swaps; at most ten times `requests`, or 20 s.
 *
 * @param cases What is swapped and asked (their names apart).
 * @param requests The requests to send.
 * @returns What the clients saw.
 */
export async function race(
  cases: readonly RaceCase[],
  requests: number,
): Promise<RaceResult> {
  const dir = await Deno.makeTempDir();
  const root = join(dir, "html");
  await Deno.mkdir(join(root, "app"), { recursive: true });
  const jobs = await Promise.all(
    cases.map((c, i) => caseFiles({ c, dir, root, n: i })),
  );
  if (!cases.some((c) => c.swapped === "index.html")) {
    await Deno.writeTextFile(join(root, "index.html"), MARK_IN.repeat(2048));
  }
  const worker = new Worker(
    new URL("./_swapper_worker.ts", import.meta.url),
    { type: "module" },
  );
  // [grants, stop, swaps], shared with the swapper (_swapper_worker.ts).
  const shared = new Int32Array(new SharedArrayBuffer(12));
  const grant = () => {
    Atomics.add(shared, GRANTS, 1);
    Atomics.notify(shared, GRANTS);
  };
  let started = () => {};
  const swapping = new Promise<void>((resolve) => started = resolve);
  const done = new Promise<{ swaps: number }>((resolve) => {
    worker.onmessage = (e) => {
      if (e.data === "started") started();
      else resolve(e.data);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      started();
      resolve({ swaps: -1 }); // asserted below
    };
  });
  const counts: RaceResult = {
    leaked: 0,
    served: 0,
    refused: 0,
    met: 0,
    wrong: 0,
  };
  let unanswered = 0;
  const asks = cases.map((c) =>
    `GET ${c.target} HTTP/1.1\r\nHost: localhost\r\n${
      Object.entries(c.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`)
        .join("")
    }`
  );
  try {
    await using gw = await serveRoot(root, dir);
    // Served once before the swaps, as a station serves its app all day:
    // under a swapper that never stops, only a file proved inside before
    // can be proved at all (static/settled_proof.ts).
    for (const ask of asks) {
      const warm = await rawRequest(gw.port, `${ask}Connection: close\r\n\r\n`);
      ok(warm.startsWith("HTTP/1.1 200 "), warm.slice(0, 200));
    }
    worker.postMessage({
      jobs,
      maxSwaps: 1_000_000,
      maxMs: 60_000,
      budget: { grants: shared, perGrant: SWAPS_PER_REQUEST },
    });
    // Requests start once the swapper is seen at work.
    grant();
    await swapping;
    // A bound for a loaded machine.
    const end = Date.now() + 20_000;
    let next = 0;
    // Ends once the swapper has done MIN_SWAPS and the swaps met enough
    // requests (or all were sent): ended by the meetings alone, a fast
    // gateway met them before the swapper had done its minimum.
    const more = () =>
      next < requests * 10 && Date.now() < end &&
      (Atomics.load(shared, SWAPS) < MIN_SWAPS ||
        (next < requests && !metEnough(counts)));
    const client = async () => {
      using conn = new KeptAlive(gw.port);
      while (more()) {
        const c = cases[next % cases.length]!;
        // Raw HTTP: fetch would try to gunzip the sidecar's plain bytes.
        const ask = `${asks[next % cases.length]}\r\n`;
        next++;
        grant();
        const res = await conn.ask(ask);
        if (res === "") {
          // No answer is no race met: a gateway that stops answering must
          // fail the race, not end it sooner.
          unanswered++;
          continue;
        }
        tally(counts, c, res);
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    strictEqual(unanswered, 0, `${unanswered} requests got no answer`);
  } finally {
    Atomics.store(shared, STOP, 1);
    Atomics.notify(shared, GRANTS);
    const { swaps } = await done;
    worker.terminate();
    await Deno.remove(dir, { recursive: true });
    ok(swaps >= MIN_SWAPS, `the swapper ran (${swaps} swaps)`);
  }
  return counts;
}

/** Counts one answer for case `c`. */
function tally(counts: RaceResult, c: RaceCase, res: string): void {
  const body = res.slice(res.indexOf("\r\n\r\n") + 4);
  if (body.includes(MARK_OUT)) counts.leaked++;
  if (res.startsWith("HTTP/1.1 200 ")) {
    counts.served++;
    if (body !== MARK_IN.repeat(c.size)) counts.wrong++;
    const sidecar = c.swapped.endsWith(".gz");
    if (sidecar && !/\r\ncontent-encoding: gzip\r\n/i.test(res)) {
      counts.met++;
    }
  } else {
    counts.refused++;
    counts.met++;
  }
}

/** Writes case `c`'s inside and outside files; returns the swapper's job. */
async function caseFiles(
  { c, dir, root, n }: { c: RaceCase; dir: string; root: string; n: number },
): Promise<{ target: string; inside: string; outside: string; kind: string }> {
  const outside = join(dir, `secret-${n}`);
  const target = join(root, c.swapped);
  const inside = join(root, `.inside-${n}`);
  if (c.folder) {
    // root/<swapped>/a.js inside, secret/a.js outside; the folder moves to
    // .inside and back while a link takes its place.
    await Deno.mkdir(target, { recursive: true });
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(target, "a.js"), MARK_IN.repeat(c.size));
    await Deno.writeTextFile(join(outside, "a.js"), MARK_OUT.repeat(c.size));
  } else {
    await Deno.writeTextFile(outside, MARK_OUT.repeat(c.size));
    await Deno.writeTextFile(inside, MARK_IN.repeat(c.size));
    await Deno.link(inside, target);
  }
  if (c.swapped.endsWith(".gz")) {
    await Deno.writeTextFile(target.slice(0, -3), MARK_IN.repeat(c.size));
  }
  return { target, inside, outside, kind: c.folder ? "dir" : "file" };
}
