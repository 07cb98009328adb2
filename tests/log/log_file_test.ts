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

/** What blocks a rotation, staged in the log's folder (`dir`) at `path`. */
interface Blockage {
  name: string;
  /** Not stageable on this system. */
  ignore?: boolean;
  /** Stages it; `false`: not stageable here (the row is skipped). */
  stage(dir: string, path: string): boolean;
  /** Undoes what the folder's removal cannot (attributes). */
  undo?(dir: string, path: string): void;
  /** Lines past the limit are dropped rather than the file emptied. */
  drops?: boolean;
}

/**
 * `chattr` (root on Linux): `+i` keeps a file from being renamed, replaced
 * or deleted, as a program holding it open without `FILE_SHARE_DELETE` does
 * on Windows; `+a` also keeps it from being emptied. Wine stages neither a
 * held file nor a read-only one that refuses its replacement.
 */
function chattr(flags: string, path: string): boolean {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  try {
    return new Deno.Command("chattr", {
      args: [flags, path],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false; // no chattr, or a file system without the attributes
  }
}

/** `chattr` is root's on Linux. */
const ROOT_ON_LINUX = Deno.build.os === "linux" && Deno.uid() === 0;

/** A non-empty folder at `at` (the operator's, or anyone's). */
function folderAt(at: string): void {
  Deno.removeSync(at);
  Deno.mkdirSync(at);
  Deno.writeTextFileSync(`${at}/inside`, "x");
}

function statOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

const BLOCKAGES: Blockage[] = [
  ...[1, 2, 3].map((slot): Blockage => ({
    name: `a folder at .${slot}`,
    stage: (_dir, path) => (folderAt(`${path}.${slot}`), true),
  })),
  {
    name: "a folder at every slot",
    stage: (_dir, path) => {
      for (let slot = 1; slot <= 3; slot++) folderAt(`${path}.${slot}`);
      return true;
    },
  },
  ...[1, 3].map((slot): Blockage => ({
    name: `a file held at .${slot} (chattr +i)`,
    ignore: !ROOT_ON_LINUX,
    stage: (_dir, path) => {
      Deno.writeTextFileSync(`${path}.${slot}`, "held\n");
      return chattr("+i", `${path}.${slot}`);
    },
    undo: (_dir, path) => void chattr("-i", `${path}.${slot}`),
  })),
  {
    name: "a folder that cannot be written",
    ignore: Deno.build.os === "windows",
    stage: (dir) => {
      if (Deno.build.os === "windows") return false;
      if (Deno.uid() === 0) return chattr("+i", dir);
      Deno.chmodSync(dir, 0o555);
      return true;
    },
    undo: (dir) => {
      if (Deno.uid() === 0) chattr("-i", dir);
      else Deno.chmodSync(dir, 0o755);
    },
  },
  {
    name: "the log itself held (chattr +a: appends only)",
    ignore: !ROOT_ON_LINUX,
    stage: (_dir, path) => chattr("+a", path),
    undo: (_dir, path) => void chattr("-a", path),
    drops: true,
  },
];

for (const blockage of BLOCKAGES) {
  Deno.test({
    name:
      `LogFile.write() stays within its limit with ${blockage.name} in the way`,
    ignore: blockage.ignore ?? false,
  }, () => {
    const dir = Deno.makeTempDirSync();
    const logs = `${dir}/logs`;
    const path = `${logs}/access.log`;
    const max = 4096;
    const keep = 3;
    const errors: string[] = [];
    try {
      const log = LogFile.open(path, {
        maxBytes: max,
        keep,
        onError: (m) => errors.push(m),
      });
      // A few rotations first, so every slot holds a file.
      const line = (i: number) =>
        `line ${String(i).padStart(5, "0")} ${"x".repeat(40)}`;
      let i = 0;
      for (; i < 400; i++) log.write(line(i));
      strictEqual(errors.length, 0);
      if (!blockage.stage(logs, path)) {
        log.close();
        return; // not stageable on this system (needs root's chattr)
      }
      try {
        let written = 0;
        for (; i < 3400; i++) if (log.write(line(i))) written++;
        log.close();
        let total = 0;
        for (const name of [path, ...[1, 2, 3].map((n) => `${path}.${n}`)]) {
          const info = statOrNull(name);
          if (info === null || !info.isFile) continue;
          strictEqual(info.size <= max, true, `${name}: ${info.size} bytes`);
          total += info.size;
        }
        strictEqual(total <= (keep + 1) * max, true, `${total} bytes`);
        // Each failure told once, not once per rotation.
        strictEqual(errors.length > 0, true, "the failure is told");
        deepStrictEqual(errors, [...new Set(errors)]);
        strictEqual(errors.length <= keep + 1, true, errors.join("\n"));
        for (const e of errors) {
          strictEqual(
            e.startsWith(`cannot rotate log file "${path}": `),
            true,
            e,
          );
          strictEqual(/\(\d+: [A-Z]/.test(e), true, e);
        }
        if (blockage.drops) {
          strictEqual(written < 3000, true, "lines past the limit dropped");
          strictEqual(errors.some((e) => e.includes("are dropped")), true);
        } else {
          strictEqual(written, 3000);
          // The newest line is in the log itself.
          strictEqual(lines(path).at(-1), line(3399));
        }
      } finally {
        blockage.undo?.(logs, path);
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  });
}
