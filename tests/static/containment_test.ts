/** Containment of the client-app folder. */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  isSafeSegment,
  openInsideRoot,
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

Deno.test(
  "openInsideRoot() follows symlinks and refuses what resolves outside",
  {
    ignore: Deno.build.os === "windows", // symlinks need a privilege there
  },
  async (t) => {
    const dir = await Deno.makeTempDir();
    try {
      const root = join(dir, "html");
      await Deno.mkdir(join(root, "assets"), { recursive: true });
      await Deno.mkdir(join(dir, "html-other"));
      await Deno.writeTextFile(join(root, "assets", "app.js"), "1");
      await Deno.writeTextFile(join(dir, "html-other", "x.js"), "2");
      await Deno.writeTextFile(join(dir, "secret.txt"), "3");
      await Deno.symlink(join(dir, "secret.txt"), join(root, "out.txt"));
      await Deno.symlink(join(dir, "html-other"), join(root, "sibling"));
      await Deno.symlink(join(root, "assets"), join(root, "in"));
      await Deno.symlink(join(root, "assets", "app.js"), join(root, "app.js"));
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

Deno.test("openInsideRoot() opens a file below the root and fails a missing one", async () => {
  // Runs on every platform, Wine included: no links needed.
  const dir = await Deno.makeTempDir();
  try {
    const root = join(dir, "html");
    await Deno.mkdir(join(root, "assets"), { recursive: true });
    await Deno.writeTextFile(join(root, "assets", "app.js"), "let a;");
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
