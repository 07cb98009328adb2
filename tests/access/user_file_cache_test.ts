/**
 * UserFileCache: lookups remembered while the file's version holds, read
 * again when it changes or cannot be trusted, bounded whatever the names.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { UserFileCache } from "../../src/access/mod.ts";

Deno.test("UserFileCache remembers lookups while the file's version holds and reads again when it changes", async () => {
  const path = await Deno.makeTempFile();
  try {
    let version: string | null = "v1";
    const cache = new UserFileCache(() => Promise.resolve(version));
    await Deno.writeTextFile(path, "ann:{PLAIN}one\n");
    deepStrictEqual(await cache.lookup(path, "ann"), {
      kind: "found",
      value: "{PLAIN}one",
    });
    deepStrictEqual(await cache.lookup(path, "bob"), { kind: "not-found" });
    // The version holds: what was read stands.
    await Deno.writeTextFile(path, "ann:{PLAIN}two\nbob:{PLAIN}b\n");
    deepStrictEqual(await cache.lookup(path, "ann"), {
      kind: "found",
      value: "{PLAIN}one",
    });
    deepStrictEqual(await cache.lookup(path, "bob"), { kind: "not-found" });
    // A new version: read again.
    version = "v2";
    deepStrictEqual(await cache.lookup(path, "ann"), {
      kind: "found",
      value: "{PLAIN}two",
    });
    // No version (changed a moment ago, missing): read every time.
    version = null;
    await Deno.writeTextFile(path, "ann:{PLAIN}three\n");
    deepStrictEqual(await cache.lookup(path, "ann"), {
      kind: "found",
      value: "{PLAIN}three",
    });
    await Deno.remove(path);
    strictEqual((await cache.lookup(path, "ann")).kind, "open-failed");
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("UserFileCache stays bounded under a storm of new user names", async () => {
  const path = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(path, "ann:{PLAIN}pw\n");
    const cache = new UserFileCache(() => Promise.resolve("v"));
    for (let i = 0; i < 3000; i++) {
      await cache.lookup(path, `user-${i}`);
      await cache.lookup(path, `${"x".repeat(300)}${i}`);
    }
    ok(cache.size <= 1024, `${cache.size} users remembered`);
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("UserFileCache with the file's own times reads a freshly written file every time", async () => {
  const path = await Deno.makeTempFile();
  try {
    const cache = new UserFileCache();
    for (const pw of ["a", "b", "c"]) {
      await Deno.writeTextFile(path, `ann:{PLAIN}${pw}\n`);
      deepStrictEqual(await cache.lookup(path, "ann"), {
        kind: "found",
        value: `{PLAIN}${pw}`,
      });
    }
    strictEqual(cache.size, 0);
  } finally {
    await Deno.remove(path);
  }
});
