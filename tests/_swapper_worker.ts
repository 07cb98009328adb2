/**
 * A Web Worker that swaps a file in the client-app folder for a symlink to
 * an outside file and back, as fast as it can or as often as the test
 * grants, until told to stop or a bound is reached. A worker is a second thread, so the swaps really race
 * the gateway's system calls (an async loop on the test's thread would only
 * run between them).
 *
 * Message in: `{ target, inside, outside, kind, maxSwaps, maxMs, budget? }`
 * to start (or `jobs: [{ target, inside, outside, kind }, …]` in place of
 * the first four: each swap then takes the next job in turn), `"stop"` to
 * stop. Message out: `{ swaps, failures }` when it stops (and before it,
 * `"started"` after the first swap with a budget).
 *
 * With `budget` (an `Int32Array` over a `SharedArrayBuffer`: `[grants,
 * stop]`, and the swaps done so far in a third place if there is one) it
 * swaps `perGrant` times for each grant the test adds and waits blocked
 * (`Atomics.wait`, no spinning) while it has none, so its work is bounded
 * by the test's requests, not by how long a loaded machine takes to serve
 * them; a `stop` of 1 ends it. Without, it swaps as fast as it can.
 *
 * @module
 */

/// <reference lib="deno.worker" />

interface Job {
  /** The path the gateway serves, swapped in place. */
  target: string;
  /**
   * For a file: a hidden file below the root with the inside content, hard-
   * linked in. For a folder: a free hidden name the folder is moved to.
   */
  inside: string;
  /** The outside file (or folder) the symlink points at. */
  outside: string;
  /** What the link is: a file link, or a folder link (junction on Windows). */
  kind: "file" | "dir";
}

interface Start extends Partial<Job> {
  /** Several names, swapped in turn (else the one of the fields above). */
  jobs?: Job[];
  /** Stop after this many swaps. */
  maxSwaps: number;
  /** Stop after this long. */
  maxMs: number;
  /** Swaps granted by the test (see the module doc), and how many a grant is. */
  budget?: { grants: Int32Array; perGrant: number };
}

/** Where a budgeted swapper reads its grants and its stop. */
const GRANTS = 0;
const STOP = 1;
const SWAPS = 2;

let stopped = false;

/** Puts the inside file or folder back under its name after a failed swap. */
function restore(job: Job, link: string, real: string): void {
  const attempt = (step: () => void) => {
    try {
      step();
    } catch { /* nothing to undo */ }
  };
  attempt(() => Deno.removeSync(link));
  attempt(() => Deno.removeSync(real));
  if (job.kind === "dir") {
    attempt(() => {
      if (Deno.lstatSync(job.target).isSymlink) Deno.removeSync(job.target);
    });
    attempt(() => Deno.renameSync(job.inside, job.target));
  }
}

/** One swap: the name becomes a link to the outside, then itself again. */
function swap(job: Job, link: string, real: string): void {
  Deno.symlinkSync(job.outside, link, {
    type: job.kind === "dir" ? "junction" : "file",
  });
  if (job.kind === "dir") {
    // A folder cannot be renamed over: move it aside, link, move back.
    Deno.renameSync(job.target, job.inside);
    Deno.renameSync(link, job.target);
    Deno.removeSync(job.target);
    Deno.renameSync(job.inside, job.target);
  } else {
    Deno.renameSync(link, job.target);
    Deno.linkSync(job.inside, real);
    Deno.renameSync(real, job.target);
  }
}

self.onmessage = (event: MessageEvent<Start | "stop">) => {
  if (event.data === "stop") {
    stopped = true;
    return;
  }
  const start = event.data;
  const jobs = start.jobs ?? [start as Job];
  const end = Date.now() + start.maxMs;
  const budget = start.budget;
  let swaps = 0;
  let failures = 0;
  const once = () => {
    if (swaps >= start.maxSwaps || Date.now() > end) stopped = true;
    const job = jobs[(swaps + failures) % jobs.length]!;
    const link = `${job.target}.swap-link`;
    const real = `${job.target}.swap-real`;
    try {
      swap(job, link, real);
      swaps++;
      if (budget !== undefined && budget.grants.length > SWAPS) {
        Atomics.store(budget.grants, SWAPS, swaps);
      }
    } catch {
      // Windows refuses to replace a file the gateway holds open: try
      // again with a clean slate.
      failures++;
      restore(job, link, real);
    }
  };
  if (budget !== undefined) {
    // Blocked between grants: the stop comes through the shared array.
    const { grants, perGrant } = budget;
    let started = false;
    while (!stopped && Atomics.load(grants, STOP) === 0) {
      const granted = Atomics.load(grants, GRANTS);
      if (swaps + failures >= granted * perGrant) {
        const left = end - Date.now();
        if (left <= 0) break;
        Atomics.wait(grants, GRANTS, granted, left);
        continue;
      }
      once();
      if (!started) self.postMessage("started");
      started = true;
    }
    self.postMessage({ swaps, failures });
    return;
  }
  // Each loop turn is synchronous; yielding every few turns lets "stop" in.
  const turn = () => {
    for (let i = 0; i < 200 && !stopped; i++) once();
    if (stopped) self.postMessage({ swaps, failures });
    else setTimeout(turn, 0);
  };
  turn();
};
