/**
 * Containment under a race for a precompressed sidecar (`gzip_static`): a
 * second thread swaps `app.js.gz` for a symlink to an outside file and back
 * while requests that take gzip run, and not one outside byte may reach a
 * client. Its own file: see `_static_race.ts`.
 */
import { ok, strictEqual } from "node:assert/strict";
import { NO_LINKS, race } from "./_static_race.ts";

Deno.test(
  "a static location serves no outside byte while a precompressed sidecar is swapped for a symlink",
  { ignore: NO_LINKS },
  async () => {
    // All its requests run (or its 20 s): a swap met while the .gz is
    // opened waits for its folder to settle and then serves the .gz, so
    // the answers do not show the meetings the other races count.
    const result = await race({
      swapped: "app.js.gz",
      target: "/app.js",
      headers: { "accept-encoding": "gzip" },
      size: 2048,
    }, 2000);
    strictEqual(result.leaked, 0, JSON.stringify(result));
    strictEqual(result.wrong, 0, JSON.stringify(result));
    ok(result.served > 0, JSON.stringify(result));
  },
);
