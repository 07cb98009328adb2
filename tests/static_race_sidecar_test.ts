/**
 * Containment when a precompressed sidecar (`gzip_static`) is swapped for a
 * symlink to an outside file. Exact first: the swap lands at each step of
 * the `.gz`'s open and proof (`_swap_steps.ts`), once or there and back,
 * and each row's answer is the inside `.gz` or, the `.gz` refused, the file
 * itself. Then a short race as a smoke run: a second thread swaps
 * `app.js.gz` and back while requests that take gzip run, and not one
 * outside byte may reach a client. Its own file: see `_static_race.ts`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { NO_LINKS, race, SMOKE_REQUESTS } from "./_static_race.ts";
import { expectedTable, swapAtSteps, swapSitesAhead } from "./_swap_steps.ts";

// Columns: the step the `.gz` flips at (`STEPS`): before, open, fstat,
// folder, entry, root, folder-again, realpath, proved. I the inside `.gz`,
// P the file itself (the `.gz` refused, gzip_static declines), - the step
// never came. A `.gz` refused while its folder settles is waited for, and
// then the `.gz` is served if it is back.
const ONCE = `
  cold, to link: P P P P P P P - I
  cold, to real: I I I I I - - I -
  warm, to link: P - - - - - - - -
`;
// A line per first step; its columns: back at each later step.
const THERE_AND_BACK = `
  cold, to link, before:       I I I I - - I -
  cold, to link, open:         I I I - - I -
  cold, to link, fstat:        I I - - I -
  cold, to link, folder:       I - - I -
  cold, to link, entry:        - - I -
  cold, to link, root:         I I -
  cold, to link, folder-again: I -
  cold, to link, realpath:     -
  cold, to real, before:       P P P P P P - I
  cold, to real, open:         P P P P P - I
  cold, to real, fstat:        P P P P - I
  cold, to real, folder:       P P P - I
  cold, to real, entry:        P P - I
  cold, to real, root:         - - -
  cold, to real, folder-again: - -
  cold, to real, realpath:     I
`;

const TABLE = expectedTable("sidecar", {
  once: ONCE,
  thereAndBack: THERE_AND_BACK,
});
// Written now, so the folders have settled when the test runs.
if (!NO_LINKS) swapSitesAhead(TABLE.rows);

Deno.test(
  "serveFile() answers a precompressed sidecar swapped for a symlink at each step of its open and proof with the inside .gz or the file itself",
  { ignore: NO_LINKS },
  async () => {
    const { rows, expected } = TABLE;
    deepStrictEqual(await swapAtSteps(rows), expected);
  },
);

Deno.test(
  "a static location serves no outside byte while a precompressed sidecar is swapped for a symlink",
  { ignore: NO_LINKS },
  async () => {
    const result = await race([{
      swapped: "app.js.gz",
      target: "/app.js",
      headers: { "accept-encoding": "gzip" },
      size: 2048,
    }], SMOKE_REQUESTS);
    strictEqual(result.leaked, 0, JSON.stringify(result));
    strictEqual(result.wrong, 0, JSON.stringify(result));
    ok(result.served > 0, JSON.stringify(result));
  },
);
