/** Containment of the client-app folder. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  isSafeSegment,
  openInsideRoot,
  readInsideRoot,
  sameFile,
} from "../../src/static/containment.ts";
import { settledRoot } from "../_settled.ts";

Deno.test("isSafeSegment() refuses names that mean something else on Windows", async (t) => {
  const cases: [string, "windows" | "linux", boolean][] = [
    ["app.js", "windows", true],
    ["PROGRA~1", "windows", false],
    ["a~1.js", "linux", true],
    ["index.html::$DATA", "linux", false],
    ["C:", "windows", false],
    ["x.", "windows", false],
    ["x ", "linux", false],
    ["a\\b", "linux", false],
    ["a\u0000b", "linux", false],
    [".git", "linux", false],
    ["a|b", "windows", false],
    ["con", "windows", false],
    ["NUL.txt", "windows", false],
    ["com1.js", "windows", false],
    ["lpt9", "windows", false],
    ["console.js", "windows", true],
    ["con", "linux", true],
    // The class: the name before the first dot, trailing spaces stripped.
    ["com1 .txt", "windows", false],
    ["con .js", "windows", false],
    ["CON  .tar.gz", "windows", false],
    ["nul.tar.gz", "windows", false],
    ["CONIN$", "windows", false],
    ["conout$.txt", "windows", false],
    ["CLOCK$", "windows", false],
    ["COM¹", "windows", false],
    ["lpt³ .x", "windows", false],
    ["Com9", "windows", false],
    [" con.js", "windows", true],
    ["con_.js", "windows", true],
    ["conin.js", "windows", true],
    ["com10.js", "windows", true],
    ["com1 .txt", "linux", true],
  ];
  for (const [segment, family, expected] of cases) {
    await t.step(`${JSON.stringify(segment)} on ${family}`, () => {
      strictEqual(isSafeSegment(segment, family), expected);
    });
  }
});

/**
 * `html/` with links to a file and a folder inside it, and to a file and a
 * sibling folder outside.
 */
function writeLinked(): string {
  const dir = Deno.makeTempDirSync();
  const root = join(dir, "html");
  Deno.mkdirSync(join(root, "assets"), { recursive: true });
  Deno.mkdirSync(join(dir, "html-other"));
  Deno.writeTextFileSync(join(root, "assets", "app.js"), "1");
  Deno.writeTextFileSync(join(dir, "html-other", "x.js"), "2");
  Deno.writeTextFileSync(join(dir, "secret.txt"), "3");
  Deno.symlinkSync(join(dir, "secret.txt"), join(root, "out.txt"));
  Deno.symlinkSync(join(dir, "html-other"), join(root, "sibling"));
  Deno.symlinkSync(join(root, "assets"), join(root, "in"));
  Deno.symlinkSync(join(root, "assets", "app.js"), join(root, "app.js"));
  Deno.symlinkSync("../html-other", join(root, "dotdot"));
  Deno.symlinkSync("../html/assets", join(root, "updown"));
  Deno.symlinkSync(join(dir, "html-other"), join(root, "assets", "nested"));
  return dir;
}

/** `html/assets/app.js`. */
function writePlain(): string {
  const dir = Deno.makeTempDirSync();
  Deno.mkdirSync(join(dir, "html", "assets"), { recursive: true });
  Deno.writeTextFileSync(join(dir, "html", "assets", "app.js"), "let a;");
  return dir;
}

/**
 * The two tests' folders, written when the file loads (in a shard, before
 * its tests run): a file is proved inside only once its folders have been
 * still for a moment (README, **settle**), up to a second after they were
 * written. A test removes the one it took, an unload listener the others.
 */
const READY = {
  // Links need a privilege on Windows, where that test is ignored.
  linked: Deno.build.os === "windows" ? [] : [writeLinked(), writeLinked()],
  plain: [writePlain()],
};
globalThis.addEventListener("unload", () => {
  for (const dir of Object.values(READY).flat()) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Removed already.
    }
  }
});

Deno.test(
  "openInsideRoot() follows symlinks and refuses what resolves outside",
  {
    ignore: Deno.build.os === "windows", // symlinks need a privilege there
  },
  async (t) => {
    const dir = READY.linked.pop() ?? writeLinked();
    try {
      const root = join(dir, "html");
      await settledRoot(root, "assets/app.js", "in/app.js", "app.js");
      const table: [string, string, "opened" | "outside" | "failed"][] = [
        ["a file below it", join(root, "assets", "app.js"), "opened"],
        ["a link to a folder inside", join(root, "in", "app.js"), "opened"],
        ["a link to a file inside", join(root, "app.js"), "opened"],
        ["a link to a file outside", join(root, "out.txt"), "outside"],
        [
          "a link to a sibling whose name starts like the root",
          join(root, "sibling", "x.js"),
          "outside",
        ],
        ["a missing file", join(root, "nope.js"), "failed"],
      ];
      for (const [name, path, want] of table) {
        await t.step(name, () => {
          const opened = openInsideRoot(root, path);
          if (opened.kind === "opened") opened.file.close();
          strictEqual(opened.kind, want);
        });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "readInsideRoot() reads a folder through a link only when it resolves inside, as openInsideRoot() opens a file",
  {
    ignore: Deno.build.os === "windows", // symlinks need a privilege there
  },
  async (t) => {
    const dir = READY.linked.pop() ?? writeLinked();
    try {
      const root = join(dir, "html");
      await settledRoot(root, "assets/app.js", "in/app.js", "app.js");
      const names = (at: string) =>
        [...Deno.readDirSync(at)].map((e) => e.name).sort();
      const table: [string, string, string[] | "outside" | "failed"][] = [
        ["the root itself", root, [
          "app.js",
          "assets",
          "dotdot",
          "in",
          "out.txt",
          "sibling",
          "updown",
        ]],
        ["a folder below it", join(root, "assets"), ["app.js", "nested"]],
        ["a link to a folder inside", join(root, "in"), ["app.js", "nested"]],
        ["`..` in a link staying inside", join(root, "updown"), [
          "app.js",
          "nested",
        ]],
        ["a link to a folder outside", join(root, "sibling"), "outside"],
        ["`..` in a link leading outside", join(root, "dotdot"), "outside"],
        ["a nested link outside", join(root, "assets", "nested"), "outside"],
        ["a link to a file outside", join(root, "out.txt"), "outside"],
        ["a missing folder", join(root, "nope"), "failed"],
      ];
      for (const [name, path, want] of table) {
        await t.step(name, () => {
          const read = readInsideRoot(root, path, names);
          strictEqual(read.kind, Array.isArray(want) ? "inside" : want);
          if (read.kind === "inside") deepStrictEqual(read.value, want);
        });
      }
      await t.step("a file inside is proved without a read of its own", () => {
        const read = readInsideRoot(root, join(root, "app.js"), () => 1);
        strictEqual(read.kind, "inside");
        if (read.kind === "inside") strictEqual(read.info.size, 1);
      });
      await t.step("what the read throws is its failure", () => {
        const read = readInsideRoot(root, join(root, "app.js"), names);
        strictEqual(read.kind, "failed");
        if (read.kind === "failed") {
          strictEqual(read.error instanceof Deno.errors.NotADirectory, true);
        }
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("openInsideRoot() opens a file below the root and fails a missing one; readInsideRoot() reads a folder below it", async () => {
  // Runs on every platform, Wine included: no links needed.
  const dir = READY.plain.pop() ?? writePlain();
  try {
    const root = join(dir, "html");
    await settledRoot(root, "assets/app.js");
    const opened = openInsideRoot(root, join(root, "assets", "app.js"));
    strictEqual(opened.kind, "opened");
    if (opened.kind === "opened") {
      strictEqual(opened.info.size, 6);
      opened.file.close();
    }
    strictEqual(openInsideRoot(root, join(root, "nope.js")).kind, "failed");
    // A root given through a link of its own still contains its files.
    const other = openInsideRoot(
      join(root, "assets", ".."),
      join(root, "assets", "app.js"),
    );
    strictEqual(other.kind, "opened");
    if (other.kind === "opened") other.file.close();
    // A folder below it is read, and the root itself (Windows too, where
    // Deno opens no folder as a handle: the proof takes its stat).
    const names = (at: string) =>
      [...Deno.readDirSync(at)].map((e) => e.name).sort();
    for (
      const [folder, want] of [
        [join(root, "assets"), ["app.js"]],
        [root, ["assets"]],
      ] as const
    ) {
      const read = readInsideRoot(root, folder, names);
      strictEqual(read.kind, "inside", folder);
      if (read.kind === "inside") deepStrictEqual(read.value, [...want]);
    }
    strictEqual(readInsideRoot(root, join(root, "nope"), names).kind, "failed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sameFile() compares device and inode, else size, mtime and birth time", async (t) => {
  const temp = await Deno.makeTempFile();
  const base = await Deno.stat(temp);
  await Deno.remove(temp);
  const cases: [string, Partial<Deno.FileInfo>, boolean][] = [
    ["itself", {}, true],
    ["another inode", { ino: (base.ino ?? 0) + 1 }, false],
    ["another device", { dev: base.dev + 1 }, false],
    ["no inode, same times", { ino: null }, true],
    ["no inode, another mtime", { ino: null, mtime: new Date(1) }, false],
    ["no inode, another size", { ino: null, size: base.size + 1 }, false],
  ];
  for (const [name, change, want] of cases) {
    await t.step(name, () => {
      strictEqual(sameFile({ ...base, ...change }, base), want);
    });
  }
});

Deno.test("Deno reports one device and inode for an open file and its path, on this platform too", () => {
  // openInsideRoot compares a handle's fstat with the lstat of its path;
  // on Windows (and under Wine) Deno takes both from the file index.
  const dir = Deno.makeTempDirSync();
  try {
    const path = join(dir, "a.js");
    Deno.writeTextFileSync(path, "1");
    Deno.writeTextFileSync(join(dir, "b.js"), "1");
    using file = Deno.openSync(path);
    const opened = file.statSync();
    const named = Deno.lstatSync(Deno.realPathSync(path));
    strictEqual(typeof opened.ino, "number");
    strictEqual(opened.ino, named.ino);
    strictEqual(opened.dev, named.dev);
    strictEqual(sameFile(opened, named), true);
    strictEqual(sameFile(opened, Deno.lstatSync(join(dir, "b.js"))), false);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
