import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { LogFile } from "../../src/log/log_file.ts";

function lines(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}

Deno.test("LogFile.write() starts a new file after an external rename", async () => {
  const dir = await Deno.makeTempDir();
  let now = 0;
  try {
    const log = LogFile.open(`${dir}/error.log`, { now: () => now });
    log.write("one");
    await Deno.rename(`${dir}/error.log`, `${dir}/error.log.old`);
    log.write("two"); // within the check interval: still the open (renamed) file
    now += 1000;
    log.write("three");
    log.close();
    deepStrictEqual(lines(`${dir}/error.log.old`), ["one", "two"]);
    deepStrictEqual(lines(`${dir}/error.log`), ["three"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "LogFile.write() starts a new file after an external delete",
  // Wine deletes a file that is open only when its last handle closes (the
  // name stays until then), as Windows did before POSIX delete semantics:
  // the delete cannot be staged there.
  ignore: Deno.build.os === "windows",
}, async () => {
  const dir = await Deno.makeTempDir();
  let now = 0;
  try {
    const log = LogFile.open(`${dir}/a.log`, { now: () => now });
    log.write("one");
    await Deno.remove(`${dir}/a.log`);
    now += 5000;
    log.write("two");
    log.close();
    deepStrictEqual(lines(`${dir}/a.log`), ["two"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LogFile.write() rotates by size, keeps N files, and loses and splits no line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/access.log`;
    const log = LogFile.open(path, { maxBytes: 100, keep: 2 });
    const written: string[] = [];
    for (let i = 0; i < 50; i++) {
      const line = `line ${String(i).padStart(3, "0")} ${"x".repeat(10)}`;
      written.push(line);
      strictEqual(log.write(line), true);
    }
    log.close();
    const files = [`${path}.2`, `${path}.1`, path];
    for (const f of files) {
      strictEqual((await Deno.stat(f)).size <= 100, true, f);
    }
    strictEqual(
      (() => {
        try {
          Deno.statSync(`${path}.3`);
          return true;
        } catch {
          return false;
        }
      })(),
      false,
    );
    const kept = files.flatMap(lines);
    deepStrictEqual(kept, written.slice(written.length - kept.length));
    for (const l of kept) strictEqual(/^line \d{3} x{10}$/.test(l), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LogFile.open() creates the folder and appends to an existing file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/deep/er/logs/error.log`;
    const first = LogFile.open(path);
    first.write("a");
    first.close();
    const second = LogFile.open(path);
    second.write("b");
    second.close();
    deepStrictEqual(lines(path), ["a", "b"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "LogFile.write() reports a failure instead of throwing",
  // Wine cannot remove the folder of an open file (delete pending until the
  // last handle closes), so the folder cannot be replaced by a file there.
  ignore: Deno.build.os === "windows",
}, async () => {
  const dir = await Deno.makeTempDir();
  const errors: string[] = [];
  let now = 0;
  try {
    const log = LogFile.open(`${dir}/logs/e.log`, {
      now: () => now,
      onError: (m) => errors.push(m),
    });
    await Deno.remove(`${dir}/logs`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/logs`,
      "now a file, so the folder cannot come back",
    );
    now += 2000;
    strictEqual(log.write("lost"), false);
    strictEqual(errors.length > 0, true);
    log.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LogFile.write() never fuses a line with one a failed write cut", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A line cut before its newline (a full disk, a power cut) by an
    // earlier write or process.
    await Deno.writeTextFile(`${dir}/e.log`, "whole\ncut at 23:27");
    const log = LogFile.open(`${dir}/e.log`);
    log.write('127.0.0.1 - - [x] "GET / HTTP/1.1" 200 1 "-" "-"');
    log.write("next");
    log.close();
    strictEqual(
      await Deno.readTextFile(`${dir}/e.log`),
      'whole\ncut at 23:27\n127.0.0.1 - - [x] "GET / HTTP/1.1" 200 1 "-" "-"\nnext\n',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "LogFile.write() on a full disk: the line after the space comes back starts on its own line",
  // Needs a small file system: root on Linux mounts a 16 KiB tmpfs.
  { ignore: Deno.build.os !== "linux" || Deno.uid() !== 0 },
  async () => {
    const dir = await Deno.makeTempDir();
    const mount = (args: string[]) =>
      new Deno.Command(args[0]!, { args: args.slice(1), stderr: "null" })
        .output();
    if (
      !(await mount(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", dir]))
        .success
    ) {
      await Deno.remove(dir);
      return; // no mount permission here (a container): nothing to test
    }
    try {
      // Other files take half the space; the log fills the rest.
      await Deno.writeFile(`${dir}/other`, new Uint8Array(8192));
      const errors: string[] = [];
      const log = LogFile.open(`${dir}/e.log`, {
        onError: (m) => errors.push(m),
      });
      let lines = 0;
      while (log.write("x".repeat(99)) && lines < 1000) lines++;
      strictEqual(errors.length, 1, "the disk filled");
      const cut = await Deno.readTextFile(`${dir}/e.log`);
      strictEqual(cut.endsWith("\n"), false, "a line was cut");
      // Space comes back (old files deleted) while the gateway runs.
      await Deno.remove(`${dir}/other`);
      strictEqual(log.write("after"), true);
      log.close();
      const text = await Deno.readTextFile(`${dir}/e.log`);
      strictEqual(text, `${cut}\nafter\n`);
    } finally {
      await mount(["umount", dir]);
      await Deno.remove(dir, { recursive: true });
    }
  },
);
