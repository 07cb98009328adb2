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
 * Runs one race: the gateway serves a fresh folder while a worker swaps
 * `c.swapped` for a symlink to an outside file and back, 8 clients asking
 * until the swaps met {@linkcode RACES_MET} requests, `requests` were sent
 * or 20 s passed.
 *
 * @param c What is swapped and asked.
 * @param requests The most requests to send.
 * @returns What the clients saw.
 */
export async function race(c: RaceCase, requests: number): Promise<{
  leaked: number;
  served: number;
  refused: number;
  met: number;
  wrong: number;
}> {
  const dir = await Deno.makeTempDir();
  const root = join(dir, "html");
  await Deno.mkdir(join(root, "app"), { recursive: true });
  const outside = join(dir, "secret");
  const target = join(root, c.swapped);
  const inside = join(root, ".inside");
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
  if (c.swapped !== "index.html") {
    await Deno.writeTextFile(join(root, "index.html"), MARK_IN.repeat(c.size));
  }
  const worker = new Worker(
    new URL("./_swapper_worker.ts", import.meta.url),
    { type: "module" },
  );
  // [grants, stop], shared with the swapper (_swapper_worker.ts).
  const grants = new Int32Array(new SharedArrayBuffer(8));
  const grant = () => {
    Atomics.add(grants, 0, 1);
    Atomics.notify(grants, 0);
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
  let leaked = 0;
  let served = 0;
  let refused = 0;
  let unanswered = 0;
  let met = 0;
  let wrong = 0;
  try {
    await using gw = await serveRoot(root, dir);
    // Served once before the swaps, as a station serves its app all day:
    // under a swapper that never stops, only a file proved inside before
    // can be proved at all (static/settled_proof.ts).
    const warm = await rawRequest(
      gw.port,
      `GET ${c.target} HTTP/1.1\r\nHost: localhost\r\n${
        Object.entries(c.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`)
          .join("")
      }Connection: close\r\n\r\n`,
    );
    ok(warm.startsWith("HTTP/1.1 200 "), warm.slice(0, 200));
    worker.postMessage({
      target,
      inside,
      outside,
      kind: c.folder ? "dir" : "file",
      maxSwaps: 1_000_000,
      maxMs: 60_000,
      budget: { grants, perGrant: SWAPS_PER_REQUEST },
    });
    // Requests start once the swapper is seen at work.
    grant();
    await swapping;
    // A bound for a loaded machine; on an idle one RACES_MET ends it first.
    const end = Date.now() + 20_000;
    let next = 0;
    const sidecar = c.swapped.endsWith(".gz");
    // Raw HTTP: fetch would try to gunzip the sidecar's plain bytes.
    const ask = `GET ${c.target} HTTP/1.1\r\nHost: localhost\r\n${
      Object.entries(c.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`)
        .join("")
    }\r\n`;
    const client = async () => {
      using conn = new KeptAlive(gw.port);
      while (
        next < requests && Date.now() < end &&
        !metEnough({ served, met })
      ) {
        next++;
        grant();
        const res = await conn.ask(ask);
        if (res === "") {
          // No answer is no race met: a gateway that stops answering must
          // fail the race, not end it sooner.
          unanswered++;
          continue;
        }
        const body = res.slice(res.indexOf("\r\n\r\n") + 4);
        if (body.includes(MARK_OUT)) leaked++;
        if (res.startsWith("HTTP/1.1 200 ")) {
          served++;
          if (body !== MARK_IN.repeat(c.size)) wrong++;
          if (sidecar && !/\r\ncontent-encoding: gzip\r\n/i.test(res)) met++;
        } else {
          refused++;
          met++;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    strictEqual(unanswered, 0, `${unanswered} requests got no answer`);
  } finally {
    Atomics.store(grants, 1, 1);
    Atomics.notify(grants, 0);
    const { swaps } = await done;
    worker.terminate();
    await Deno.remove(dir, { recursive: true });
    ok(swaps > 100, `the swapper ran (${swaps} swaps)`);
  }
  return { leaked, served, refused, met, wrong };
}
