/**
 * Containment when a served file is swapped for a symlink to an outside
 * file. Exact first: the swap lands at each step of the file's open and
 * proof (`_swap_steps.ts`), once or there and back, and each row's answer
 * is the refusal or the inside file. Then a short race as a smoke run: a
 * second thread swaps four files for links and back in turn while requests
 * for them run (a cached and a streamed file, a folder's index.html, the
 * SPA fallback, through one gateway process's own request flow), and not
 * one outside byte may reach a client; `scripts/containment_race.ts` is the run at scale. A folder on
 * the path is static_race_folder_test.ts's, the precompressed sidecar
 * static_race_sidecar_test.ts's: files of their own, so the suite runs
 * them in different shards.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { NO_LINKS, race, SMOKE_REQUESTS } from "./_static_race.ts";
import { expectedTable, swapAtSteps, swapSitesAhead } from "./_swap_steps.ts";

// Columns: the step the name flips at (`STEPS`): before, open, fstat,
// folder, entry, root, folder-again, realpath, proved. R refused, I the
// inside file, - the step never came (a cached copy or a proof
// remembered answered, or an earlier look refused).
const ONCE = (warm: string) => `
  cold, to link: R R R R R R R - I
  cold, to real: I I R R R - - R -
  warm, to link: ${warm}
`;
// A line per first step; its columns: back at each later step.
const THERE_AND_BACK = `
  cold, to link, before:       I R R R - - R -
  cold, to link, open:         R R R - - R -
  cold, to link, fstat:        I I - - I -
  cold, to link, folder:       I - - I -
  cold, to link, entry:        - - I -
  cold, to link, root:         I R -
  cold, to link, folder-again: R -
  cold, to link, realpath:     -
  cold, to real, before:       R R R R R R - I
  cold, to real, open:         R R R R R - I
  cold, to real, fstat:        R R - - - -
  cold, to real, folder:       R - - - -
  cold, to real, entry:        - - - -
  cold, to real, root:         - - -
  cold, to real, folder-again: - -
  cold, to real, realpath:     -
`;

const GRIDS = {
  // Warm, a cached copy answers once the stat saw the inside file.
  "cached file": ONCE("R - - - - - - - -"),
  // Warm, the handle's file is remembered as proved: no look-up follows.
  "streamed file": ONCE("R R I - - - - - I"),
} as const;

const CACHED = expectedTable("cached file", {
  once: GRIDS["cached file"],
  thereAndBack: THERE_AND_BACK,
});
// Cold, a cached file is read from its handle as a streamed one is, and
// kept: the same steps, so the streamed file's rows once only.
const STREAMED = expectedTable("streamed file", {
  once: GRIDS["streamed file"],
  thereAndBack: "",
});
// Written now, so the folders have settled when the test runs.
if (!NO_LINKS) swapSitesAhead([...CACHED.rows, ...STREAMED.rows]);

Deno.test(
  "serveFile() answers a cached or streamed file swapped for a symlink at each step of its open and proof with the refusal or the inside file",
  { ignore: NO_LINKS },
  async () => {
    const [cached, streamed] = [CACHED, STREAMED];
    // One run, so that the waits for the folders to settle overlap.
    deepStrictEqual(await swapAtSteps([...cached.rows, ...streamed.rows]), [
      ...cached.expected,
      ...streamed.expected,
    ]);
  },
);

Deno.test(
  "a static location serves no outside byte while a cached file, a streamed file, a folder's index.html and the SPA fallback are swapped for symlinks",
  { ignore: NO_LINKS },
  async () => {
    const result = await race([
      { swapped: "app.js", target: "/app.js", size: 2048 },
      { swapped: "big.js", target: "/big.js", size: 300 * 1024 },
      { swapped: "app/index.html", target: "/app/", size: 2048 },
      {
        swapped: "index.html",
        target: "/some/route",
        headers: { accept: "text/html" },
        size: 2048,
      },
    ], SMOKE_REQUESTS);
    strictEqual(result.leaked, 0, JSON.stringify(result));
    strictEqual(result.wrong, 0, JSON.stringify(result));
    ok(result.served > 0, JSON.stringify(result));
  },
);
