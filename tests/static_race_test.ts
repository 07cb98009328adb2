/**
 * Containment under a race: a second thread swaps a served file for a
 * symlink to an outside file and back while requests run until the swaps
 * have met a hundred of them, and not one outside byte may reach a client
 * (cached and streamed files, a folder's index.html, the SPA fallback; a
 * folder on the path in static_race_folder_test.ts, the precompressed
 * sidecar in static_race_sidecar_test.ts: files of their own, so the suite
 * runs the races in different shards).
 */
import { ok, strictEqual } from "node:assert/strict";
import { NO_LINKS, race, type RaceCase } from "./_static_race.ts";

const CASES: [string, RaceCase][] = [
  ["a cached file", { swapped: "app.js", target: "/app.js", size: 2048 }],
  [
    "a streamed file",
    { swapped: "big.js", target: "/big.js", size: 300 * 1024 },
  ],
  [
    "a folder's index.html",
    { swapped: "app/index.html", target: "/app/", size: 2048 },
  ],
  [
    "the SPA fallback",
    {
      swapped: "index.html",
      target: "/some/route",
      headers: { accept: "text/html" },
      size: 2048,
    },
  ],
];

for (const [name, c] of CASES) {
  Deno.test(
    `a static location serves no outside byte while ${name} is swapped for a symlink`,
    { ignore: NO_LINKS },
    async () => {
      const result = await race(c, 2000);
      strictEqual(result.leaked, 0, JSON.stringify(result));
      strictEqual(result.wrong, 0, JSON.stringify(result));
      ok(result.served > 0, JSON.stringify(result));
    },
  );
}
