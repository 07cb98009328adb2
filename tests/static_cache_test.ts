/** The in-memory cache of small static files. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { asciiText, StaticCache } from "../src/static_cache.ts";

const bytes = (...xs: number[]) => new Uint8Array(xs);

Deno.test("asciiText() keeps only bytes that encode back exactly", async (t) => {
  const table: [string, Uint8Array, string | null][] = [
    ["empty", bytes(), ""],
    ["plain script", new TextEncoder().encode("let a = 1;\n"), "let a = 1;\n"],
    ["NUL and DEL are ASCII", bytes(0x00, 0x7f), "\u0000\u007f"],
    ["UTF-8 é", new TextEncoder().encode("é"), null],
    ["a BOM before ASCII", bytes(0xef, 0xbb, 0xbf, 0x61), null],
    ["a lone 0x80 (invalid UTF-8)", bytes(0x61, 0x80), null],
    ["a Latin-1 byte", bytes(0xe9), null],
    ["binary (PNG signature)", bytes(0x89, 0x50, 0x4e, 0x47), null],
  ];
  for (const [name, input, want] of table) {
    await t.step(name, () => {
      const text = asciiText(input);
      strictEqual(text, want);
      if (text !== null) deepStrictEqual(new TextEncoder().encode(text), input);
    });
  }
});

Deno.test("StaticCache.get() returns ASCII files as text too and counts both copies", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/app.js`, "console.log(1)");
    Deno.writeFileSync(`${dir}/logo.png`, bytes(0x89, 0x50, 0x4e, 0x47));
    const cache = new StaticCache();
    const js = cache.get(`${dir}/app.js`, Deno.statSync(`${dir}/app.js`))!;
    strictEqual(js.ascii, "console.log(1)");
    const png = cache.get(`${dir}/logo.png`, Deno.statSync(`${dir}/logo.png`))!;
    strictEqual(png.ascii, null);
    deepStrictEqual(png.bytes, bytes(0x89, 0x50, 0x4e, 0x47));
    strictEqual(cache.totalBytes, 14 * 2 + 4);
    // A hit is the same entry, not a fresh read.
    strictEqual(
      cache.get(`${dir}/app.js`, Deno.statSync(`${dir}/app.js`)),
      js,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("StaticCache.get() rereads a file whose stat changed and stays within its budget", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const cache = new StaticCache({ maxFileBytes: 100, maxTotalBytes: 120 });
    Deno.writeTextFileSync(`${dir}/a.js`, "a".repeat(50));
    cache.get(`${dir}/a.js`, Deno.statSync(`${dir}/a.js`));
    strictEqual(cache.totalBytes, 100);
    Deno.writeTextFileSync(`${dir}/a.js`, "ü".repeat(30)); // 60 bytes, not ASCII
    const fresh = cache.get(`${dir}/a.js`, Deno.statSync(`${dir}/a.js`))!;
    strictEqual(fresh.ascii, null);
    strictEqual(new TextDecoder().decode(fresh.bytes), "ü".repeat(30));
    strictEqual(cache.totalBytes, 60);
    Deno.writeTextFileSync(`${dir}/b.js`, "b".repeat(40));
    cache.get(`${dir}/b.js`, Deno.statSync(`${dir}/b.js`));
    // 60 + 80 is over 120: the least recently used file (a.js) left.
    strictEqual(cache.totalBytes, 80);
    Deno.writeTextFileSync(`${dir}/big.js`, "c".repeat(101));
    strictEqual(
      cache.get(`${dir}/big.js`, Deno.statSync(`${dir}/big.js`)),
      null,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("StaticCache.stat() shares one stat per path within one millisecond only", async (t) => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/app.js`;
  const other = `${dir}/other.js`;
  const cache = new StaticCache();
  // Each step changes the file (or not) and then asks at a given clock
  // reading; `want` is the size the answer reports (null: missing).
  const table: [string, () => void, string, number, number | null][] = [
    ["missing: null", () => {}, path, 100, null],
    [
      "created, same ms: the shared null",
      () => {
        Deno.writeTextFileSync(path, "12345");
      },
      path,
      100,
      null,
    ],
    ["next ms: a fresh stat sees it", () => {}, path, 101, 5],
    [
      "another path, same ms: its own stat",
      () => {
        Deno.writeTextFileSync(other, "1");
      },
      other,
      101,
      1,
    ],
    [
      "replaced, same ms: the shared stat",
      () => {
        Deno.writeTextFileSync(path, "1234567");
      },
      path,
      101,
      5,
    ],
    ["clock stepped back: a fresh stat", () => {}, path, 50, 7],
    [
      "back at an old reading: a fresh stat, not the old one",
      () => {
        Deno.writeTextFileSync(other, "22");
      },
      other,
      101,
      2,
    ],
    [
      "removed, later ms: null",
      () => {
        Deno.removeSync(path);
      },
      path,
      10_000,
      null,
    ],
  ];
  try {
    for (const [name, change, file, now, want] of table) {
      await t.step(name, () => {
        change();
        strictEqual(cache.stat(file, now)?.size ?? null, want);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
