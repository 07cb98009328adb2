/**
 * Containment under a race for a folder on the path: a second thread moves
 * `lib/` aside and puts a symlink to an outside folder in its place and
 * back, or Linux exchanges the two in one `renameat2` call, while requests
 * run, and not one outside byte may reach a client. Its own file, apart
 * from the file races of static_race_test.ts: see `_static_race.ts`.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest } from "./_utils.ts";
import {
  MARK_IN,
  MARK_OUT,
  metEnough,
  NO_LINKS,
  race,
  serveRoot,
  SWAPS_PER_REQUEST,
} from "./_static_race.ts";

Deno.test(
  "a static location serves no outside byte while a folder on the path is swapped for a symlink",
  { ignore: NO_LINKS },
  async () => {
    const result = await race(
      { swapped: "lib", target: "/lib/a.js", size: 2048, folder: true },
      2000,
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
          while (next < 2000 && Date.now() < end && !metEnough(counts)) {
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
