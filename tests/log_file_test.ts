import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { LogFile } from "../src/log_file.ts";

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

Deno.test("LogFile.write() starts a new file after an external delete", async () => {
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

Deno.test("LogFile.write() reports a failure instead of throwing", async () => {
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
