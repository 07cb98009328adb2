import { strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  ConfigFileRefusal,
  readConfigText,
} from "../../src/runtime/config_read.ts";

const POSIX = Deno.build.os !== "windows";

Deno.test("readConfigText() refuses what is not a regular file or is past the cap", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const big = join(dir, "big.conf");
    await Deno.writeTextFile(big, "#".repeat(1025));
    const fifo = join(dir, "fifo");
    // [path, cap, the refusal's message]
    const cases: [string, number, RegExp][] = [
      [dir, 1024, /^".*" is not a regular file \(a directory\)$/],
      [big, 1024, /^".*big\.conf" is larger than 1024 bytes$/],
    ];
    if (POSIX) {
      cases.push([
        "/dev/zero",
        1024,
        /^"\/dev\/zero" is not a regular file \(a character device\)$/,
      ]);
      if (Deno.build.os === "linux") {
        await new Deno.Command("mkfifo", { args: [fifo] }).output();
        cases.push([fifo, 1024, /^".*fifo" is not a regular file \(a FIFO\)$/]);
      }
    }
    for (const [path, cap, message] of cases) {
      await t.step(path, () => {
        throws(
          () => readConfigText(path, cap),
          (e) => e instanceof ConfigFileRefusal && message.test(e.message),
        );
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readConfigText() reads a regular file up to the cap, and missing files throw Deno's error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "gw.json");
    await Deno.writeTextFile(path, '{"a":"é"}'.padEnd(1023));
    strictEqual(readConfigText(path, 1024).length, 1023);
    throws(() => readConfigText(join(dir, "none"), 1024), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
