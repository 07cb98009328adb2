/**
 * Containment when a folder on the path is exchanged with a symlink to an
 * outside folder. Exact first: the exchange lands at each step of the
 * file's open and proof (`_swap_steps.ts`), once, there and back, and in
 * the interleavings that fooled a path check (the link at the open and at
 * the file's look-up, the folder at the folder's), and each row's answer is
 * the refusal or the inside file. Then short races as smoke runs: a second
 * thread moves `lib/` aside and puts the link in its place and back, or
 * Linux exchanges the two in one `renameat2` call, while requests run, and
 * not one outside byte may reach a client. Its own file, apart from the
 * file races of static_race_test.ts: see `_static_race.ts`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest } from "./_utils.ts";
import {
  MARK_IN,
  MARK_OUT,
  metEnough,
  NO_LINKS,
  race,
  serveRoot,
  SMOKE_REQUESTS,
  SWAPS_PER_REQUEST,
} from "./_static_race.ts";
import { expectedTable, swapAtSteps, swapSitesAhead } from "./_swap_steps.ts";

// Columns: the step the folder flips at (`STEPS`): before, open, fstat,
// folder, entry, root, folder-again, realpath, proved. R refused, I the
// inside file, - the step never came (a cached copy answered, or an earlier
// look refused). Moving the folder aside and linking in one step is, at a
// step, what one `renameat2` exchange is.
const ONCE = `
  cold, to link: R R R R R R R - I
  cold, to real: I I R R - - - R -
  warm, to link: R - - - - - - - -
`;
// A line per first step; its columns: back at each later step.
const THERE_AND_BACK = `
  cold, to link, before:       I R R - - - R -
  cold, to link, open:         R R - - - R -
  cold, to link, fstat:        I - - - I -
  cold, to link, folder:       - - - I -
  cold, to link, entry:        - - - -
  cold, to link, root:         I - -
  cold, to link, folder-again: - -
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

const TABLE = expectedTable("folder", {
  once: ONCE,
  thereAndBack: THERE_AND_BACK,
  more: [
    // The link at the open and at the file's look-up, the folder at its
    // first look (the handle's file and the entry agree): the second look
    // sees the link, or the folder's change time.
    ["to link", ["open", "folder", "entry"], "R"],
    ["to link", ["open", "folder", "entry", "root"], "I"],
    ["to link", ["open", "folder", "entry", "folder-again"], "I"],
  ],
});
// Written now, so the folders have settled when the test runs.
if (!NO_LINKS) swapSitesAhead(TABLE.rows);

Deno.test(
  "serveFile() answers a file whose folder is exchanged with a symlink at each step of its open and proof with the refusal or the inside file",
  { ignore: NO_LINKS },
  async () => {
    const { rows, expected } = TABLE;
    deepStrictEqual(await swapAtSteps(rows), expected);
  },
);

Deno.test(
  "a static location serves no outside byte while a folder on the path is swapped for a symlink",
  { ignore: NO_LINKS },
  async () => {
    const result = await race(
      [{ swapped: "lib", target: "/lib/a.js", size: 2048, folder: true }],
      SMOKE_REQUESTS,
    );
    strictEqual(result.leaked, 0, JSON.stringify(result));
    strictEqual(result.wrong, 0, JSON.stringify(result));
    ok(result.served > 0, JSON.stringify(result));
  },
);

const HAS_PYTHON = Deno.build.os === "linux" && (() => {
  try {
    return new Deno.Command("python3", { args: ["--version"] }).outputSync()
      .success;
  } catch {
    return false;
  }
})();

Deno.test(
  "a static location serves no outside byte while a folder on the path is exchanged with a link (renameat2)",
  // The exchange is Linux's; python3 is a prerequisite of the suite.
  { ignore: NO_LINKS || !HAS_PYTHON },
  async () => {
    const dir = await Deno.makeTempDir();
    const root = join(dir, "html");
    const lib = join(root, "lib");
    const outside = join(dir, "secret");
    await Deno.mkdir(lib, { recursive: true });
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(lib, "a.js"), MARK_IN.repeat(2048));
    await Deno.writeTextFile(join(outside, "a.js"), MARK_OUT.repeat(2048));
    await Deno.symlink(outside, join(root, ".link"));
    const ask =
      `GET /lib/a.js HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
    const counts = { leaked: 0, served: 0, refused: 0, met: 0 };
    try {
      await using gw = await serveRoot(root, dir);
      const warm = await rawRequest(gw.port, ask);
      ok(warm.startsWith("HTTP/1.1 200 "), warm.slice(0, 200));
      const swapper = new Deno.Command("python3", {
        args: [
          new URL("./_exchange_swapper.py", import.meta.url).pathname,
          lib,
          join(root, ".link"),
          "60",
          String(SWAPS_PER_REQUEST),
        ],
        stdin: "piped",
        stdout: "piped",
      }).spawn();
      const reader = swapper.stdout.getReader();
      const grants = swapper.stdin.getWriter();
      // A byte a request (and one to be seen at work), each a grant.
      const grant = () => grants.write(new Uint8Array(1));
      try {
        await grant();
        const first = await reader.read();
        strictEqual(new TextDecoder().decode(first.value).trim(), "ready");
        const end = Date.now() + 20_000; // a bound, as race()'s
        let next = 0;
        const client = async () => {
          while (
            next < SMOKE_REQUESTS && Date.now() < end && !metEnough(counts)
          ) {
            next++;
            await grant();
            // A connection a request, unlike the race above: the python
            // swapper met kept connections' quicker requests 4 times in
            // 2,000, new connections' about 100 times in 1,500.
            const res = await rawRequest(gw.port, ask);
            const body = res.slice(res.indexOf("\r\n\r\n") + 4);
            if (body.includes(MARK_OUT)) counts.leaked++;
            if (res.startsWith("HTTP/1.1 200 ")) counts.served++;
            else {
              counts.refused++;
              counts.met++;
            }
          }
        };
        await Promise.all(Array.from({ length: 8 }, client));
      } finally {
        // The end of its grants ends it, with the folder back in place.
        await grants.close().catch(() => {});
        await swapper.status;
        reader.releaseLock();
        await swapper.stdout.cancel();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    strictEqual(counts.leaked, 0, JSON.stringify(counts));
    ok(counts.served > 0, JSON.stringify(counts));
  },
);
