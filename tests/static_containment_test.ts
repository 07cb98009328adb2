/** Containment of the client-app folder. */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { insideRoot, isSafeSegment } from "../src/static_containment.ts";

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
  ];
  for (const [segment, family, expected] of cases) {
    await t.step(`${JSON.stringify(segment)} on ${family}`, () => {
      strictEqual(isSafeSegment(segment, family), expected);
    });
  }
});

Deno.test("insideRoot() follows symlinks and refuses what resolves outside", {
  ignore: Deno.build.os === "windows", // symlinks need a privilege there
}, async (t) => {
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
    const table: [string, string, boolean][] = [
      ["the root itself", root, true],
      ["a file below it", join(root, "assets", "app.js"), true],
      ["a link to a folder inside", join(root, "in", "app.js"), true],
      ["a link to a file outside", join(root, "out.txt"), false],
      [
        "a link to a sibling whose name starts like the root",
        join(root, "sibling", "x.js"),
        false,
      ],
      ["a missing file", join(root, "nope.js"), false],
    ];
    for (const [name, path, want] of table) {
      await t.step(name, () => strictEqual(insideRoot(root, path), want));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
