/** The in-memory cache of small static files. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  ENTRY_OVERHEAD_BYTES as E,
  StaticCache,
} from "../../src/static/cache.ts";
import { wholeFileResponse } from "../../src/static/cached_body.ts";
import { validatorsOf } from "../../src/static/validators.ts";

const bytes = (...xs: number[]) => new Uint8Array(xs);

/**
 * Asserts equal bytes by the first difference: a diff of two large arrays
 * from deepStrictEqual would take gigabytes.
 */
function assertSameBytes(got: Uint8Array, want: Uint8Array, what = "body") {
  const at = got.findIndex((b, i) => b !== want[i]);
  strictEqual(got.length, want.length, `${what}: length`);
  strictEqual(at, -1, `${what}: first difference`);
}

/** The folder the files of these tests count as proved inside. */
const ROOT = "/";

/** A file's entry as the handler gets it: a hit, else read from a handle. */
function read(cache: StaticCache, path: string) {
  const hit = cache.lookup(path, Deno.statSync(path), ROOT);
  if (hit !== null) return hit;
  using file = Deno.openSync(path);
  return cache.load(path, file, file.statSync(), ROOT);
}

/** Reads a file into the cache and returns its entry. */
function cachedFile(cache: StaticCache, path: string, data: Uint8Array) {
  Deno.writeFileSync(path, data);
  return read(cache, path)!;
}

const FILES: [string, Uint8Array][] = [
  ["ASCII script", new TextEncoder().encode("let a = 'x';\n".repeat(9000))],
  [
    "UTF-8 text",
    new TextEncoder().encode("const t = '日本語 ü';\n".repeat(99)),
  ],
  ["binary", Uint8Array.from({ length: 70000 }, (_, i) => (i * 7) & 0xff)],
  ["one byte", bytes(0x80)],
];

Deno.test("wholeFileResponse() sends a cached file any number of times without using up its stream", async (t) => {
  const dir = await Deno.makeTempDir();
  const cache = new StaticCache();
  try {
    for (const [name, data] of FILES) {
      await t.step(name, async () => {
        const cached = cachedFile(cache, `${dir}/f`, data);
        for (let round = 0; round < 3; round++) {
          const res = wholeFileResponse(cached, { status: 200 });
          assertSameBytes(await res.bytes(), data);
        }
        // The copy-free path was taken: Deno resolved the stream to its
        // static body and never read it (Deno 2.9.6's extractBody()).
        strictEqual(cached.stream?.locked, false);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wholeFileResponse() falls back to the bytes when the stream is locked or disturbed", async (t) => {
  const dir = await Deno.makeTempDir();
  const cache = new StaticCache();
  const data = FILES[2]![1];
  const spoil: [string, (s: ReadableStream<Uint8Array>) => Promise<void>][] = [
    ["locked", (s) => Promise.resolve(void s.getReader())],
    ["read to the end and released", async (s) => {
      const reader = s.getReader();
      while (!(await reader.read()).done);
      reader.releaseLock();
    }],
    ["cancelled", (s) => s.cancel()],
  ];
  try {
    for (const [name, how] of spoil) {
      await t.step(name, async () => {
        const cached = cachedFile(cache, `${dir}/${name}`, data);
        await how(cached.stream!);
        const res = wholeFileResponse(cached, {
          headers: { "content-type": "application/octet-stream" },
        });
        strictEqual(
          res.headers.get("content-type"),
          "application/octet-stream",
        );
        assertSameBytes(await res.bytes(), data);
        strictEqual(cached.stream, null);
        assertSameBytes(await wholeFileResponse(cached, {}).bytes(), data);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wholeFileResponse() through Deno.serve: concurrent responses share the bytes, byte for byte", async () => {
  const dir = await Deno.makeTempDir();
  const cache = new StaticCache();
  const entries = FILES.map(([, data], i) =>
    cachedFile(cache, `${dir}/f${i}`, data)
  );
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const i = Number(new URL(req.url).pathname.slice(1));
      return wholeFileResponse(entries[i]!, {
        headers: { "content-length": String(FILES[i]![1].length) },
      });
    },
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    // 8 rounds of every file at once: 32 responses over one buffer each.
    const got = await Promise.all(
      Array.from({ length: 8 * FILES.length }, async (_, k) => {
        const i = k % FILES.length;
        const res = await fetch(`${url}/${i}`);
        return [i, await res.bytes()] as const;
      }),
    );
    for (const [i, body] of got) {
      assertSameBytes(body, FILES[i]![1], `file ${i}`);
    }
    for (const entry of entries) strictEqual(entry.stream?.locked, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StaticCache.load() counts a file twice, its bytes and its stream's copy, and its objects", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const cache = new StaticCache();
    const js = cachedFile(
      cache,
      `${dir}/app.js`,
      new TextEncoder().encode("console.log(1)"),
    );
    const png = cachedFile(
      cache,
      `${dir}/logo.png`,
      bytes(0x89, 0x50, 0x4e, 0x47),
    );
    deepStrictEqual(png.bytes, bytes(0x89, 0x50, 0x4e, 0x47));
    strictEqual(cache.totalBytes, 14 * 2 + E + 4 * 2 + E);
    // A hit is the same entry, not a fresh read.
    strictEqual(
      read(cache, `${dir}/app.js`),
      js,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("StaticCache.lookup() misses a file whose stat changed; load() rereads it a file whose stat changed and stays within its budget", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const cache = new StaticCache({
      maxFileBytes: 100,
      maxTotalBytes: 120 + E,
    });
    Deno.writeTextFileSync(`${dir}/a.js`, "a".repeat(50));
    read(cache, `${dir}/a.js`);
    strictEqual(cache.totalBytes, 100 + E);
    Deno.writeTextFileSync(`${dir}/a.js`, "ü".repeat(30)); // 60 bytes, not ASCII
    const fresh = read(cache, `${dir}/a.js`)!;
    strictEqual(new TextDecoder().decode(fresh.bytes), "ü".repeat(30));
    strictEqual(cache.totalBytes, 120 + E);
    Deno.writeTextFileSync(`${dir}/b.js`, "b".repeat(40));
    read(cache, `${dir}/b.js`);
    // Over the budget: the least recently used file (a.js) left.
    strictEqual(cache.totalBytes, 80 + E);
    Deno.writeTextFileSync(`${dir}/big.js`, "c".repeat(101));
    strictEqual(
      read(cache, `${dir}/big.js`),
      null,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("StaticCache leaves the least recently used file first, whichever was asked last", () => {
  // Each file weighs 2 × 10 bytes and its objects; the budget holds two.
  const cases: [string, string[], string[]][] = [
    ["a asked again after b", ["a", "b", "a", "c"], ["a", "c"]],
    ["a asked twice in a row", ["a", "a", "b", "c"], ["b", "c"]],
    ["b asked again twice", ["a", "b", "b", "b", "c"], ["b", "c"]],
    ["a asked again after c", ["a", "b", "c", "a", "d"], ["a", "d"]],
    ["a read again after it left", ["a", "b", "c", "a", "b"], ["a", "b"]],
  ];
  for (const [name, asks, kept] of cases) {
    const dir = Deno.makeTempDirSync();
    try {
      const cache = new StaticCache({
        maxFileBytes: 100,
        maxTotalBytes: 2 * (20 + E),
      });
      for (const file of new Set(asks)) {
        Deno.writeTextFileSync(`${dir}/${file}`, file.repeat(10));
      }
      for (const file of asks) read(cache, `${dir}/${file}`);
      const held = [...new Set(asks)].filter((file) =>
        cache.lookup(
          `${dir}/${file}`,
          Deno.statSync(`${dir}/${file}`),
          ROOT,
        ) !==
          null
      );
      deepStrictEqual(held.sort(), kept, name);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
});

Deno.test("StaticCache keeps a file's validators as of the stat it was read with", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const cache = new StaticCache();
    Deno.writeTextFileSync(`${dir}/a.js`, "one");
    Deno.utimeSync(`${dir}/a.js`, 1_000_000, 1_000_000);
    const first = read(cache, `${dir}/a.js`)!;
    deepStrictEqual(first.validators, {
      etag: '"f4240-3"',
      lastModified: "Mon, 12 Jan 1970 13:46:40 GMT",
    });
    Deno.writeTextFileSync(`${dir}/a.js`, "two!");
    Deno.utimeSync(`${dir}/a.js`, 2_000_000, 2_000_000);
    const info = Deno.statSync(`${dir}/a.js`);
    deepStrictEqual(read(cache, `${dir}/a.js`)!.validators, validatorsOf(info));
    strictEqual(validatorsOf(info).etag, '"1e8480-4"');
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("StaticCache.lookup() misses another file of the same size and mtime", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const cache = new StaticCache();
    Deno.writeTextFileSync(`${dir}/a.js`, "same");
    Deno.writeTextFileSync(`${dir}/b.js`, "same");
    Deno.utimeSync(`${dir}/a.js`, 1_000_000, 1_000_000);
    Deno.utimeSync(`${dir}/b.js`, 1_000_000, 1_000_000);
    read(cache, `${dir}/a.js`);
    strictEqual(
      cache.lookup(`${dir}/a.js`, Deno.statSync(`${dir}/b.js`), ROOT),
      null,
    );
    Deno.renameSync(`${dir}/b.js`, `${dir}/a.js`);
    strictEqual(
      cache.lookup(`${dir}/a.js`, Deno.statSync(`${dir}/a.js`), ROOT),
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

Deno.test("StaticCache charges each file its objects: a folder of tiny files fills the budget by their count", () => {
  const dir = Deno.makeTempDirSync();
  try {
    // Three one-byte files' objects: before, the budget held a thousand.
    const cache = new StaticCache({ maxTotalBytes: 3 * (2 + E) });
    for (let i = 0; i < 10; i++) {
      Deno.writeTextFileSync(`${dir}/f${i}`, "x");
      read(cache, `${dir}/f${i}`);
    }
    const held = Array.from({ length: 10 }, (_, i) => `${dir}/f${i}`).filter(
      (path) => cache.lookup(path, Deno.statSync(path), ROOT) !== null,
    );
    deepStrictEqual(held, [`${dir}/f7`, `${dir}/f8`, `${dir}/f9`]);
    strictEqual(cache.totalBytes, 3 * (2 + E));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("StaticCache.lookup() misses a file proved inside another root; proved for this one too, its one copy serves both", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const cache = new StaticCache();
    const path = `${dir}/lnk/a.js`;
    Deno.mkdirSync(`${dir}/lnk`);
    Deno.writeTextFileSync(path, "private");
    using file = Deno.openSync(path);
    // Proved inside `alias $D/lnk/`; asked for under `root $D`.
    cache.load(path, file, file.statSync(), `${dir}/lnk`);
    const info = Deno.statSync(path);
    deepStrictEqual(
      [
        cache.lookup(path, info, dir) === null,
        cache.lookup(path, info, `${dir}/lnk`) === null,
      ],
      [true, false],
    );
    // Proved inside `root $D` too (a location of its own): both roots hit
    // the one copy, read once.
    const first = cache.lookup(path, info, `${dir}/lnk`);
    strictEqual(cache.load(path, file, info, dir), first);
    deepStrictEqual(
      [cache.lookup(path, info, dir), cache.lookup(path, info, `${dir}/lnk`)],
      [first, first],
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
