/**
 * A file where the log folder should be: the start fails with the error the
 * log's open() gives, as nginx reports it on each platform: on Windows
 * CreateFile()'s 3, not the 183 of the folder creation that follows it.
 */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runStartup } from "../_in_process.ts";

const WINDOWS = Deno.build.os === "windows";

Deno.test("main() names the log's open() error, as nginx does, when a file sits where the log folder should be", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "file"), "");
    const cases: [string, string[], string][] = [
      ["the log's own folder", ["--check"], join(dir, "file", "error.log")],
      ["a folder above it", [], join(dir, "file", "logs", "error.log")],
    ];
    for (const [name, extra, log] of cases) {
      await t.step(name, async () => {
        // main()'s start in process (main_test.ts has the exit code's way
        // out of a process).
        const { code, stderr } = await runStartup([
          ...extra,
          "--listen",
          "127.0.0.1:0",
          "--error-log",
          log,
          "--access-log",
          "off",
        ]);
        strictEqual(code, 1);
        // nginx for Windows: CreateFile() on a path through a file is
        // ERROR_PATH_NOT_FOUND; on Linux open() is ENOTDIR.
        const failure = WINDOWS
          ? `CreateFile() "${log}" failed (3: The system cannot find the path specified)`
          : `open() "${log}" failed (20: Not a directory)`;
        strictEqual(
          stderr.split("\n")[0],
          `station-gateway: [emerg] ${failure}`,
        );
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
