/**
 * A hostile nginx.conf is bounded in files, characters, directives and
 * time: include trees that fan out, globs over thousands of files and huge
 * `types {}` lists end with one nginx-style message, after a bounded number
 * of reads and within a memory budget.
 */
import { ok, strictEqual } from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  MAX_DIRECTIVES,
  MAX_INCLUDED_FILES,
  parseNginxConf,
} from "../../src/nginx_conf/parser.ts";
import type { ConfIo } from "../../src/nginx_conf/mod.ts";
import { memoryIo } from "./_memory_io.ts";

const MAIN = "/n/conf/nginx.conf";

/**
 * `levels` levels of `fanOut` files, each including every file of the next
 * level (a glob): `fanOut ** levels` reads, within the nesting limit.
 */
function fanOutTree(levels: number, fanOut: number): Record<string, string> {
  const files: Record<string, string> = {
    [MAIN]: "include l0/*.conf;\n",
  };
  for (let level = 0; level < levels; level++) {
    for (let i = 0; i < fanOut; i++) {
      files[`/n/conf/l${level}/${i}.conf`] = level + 1 < levels
        ? `include l${level + 1}/*.conf;\n`
        : "# leaf\n";
    }
  }
  return files;
}

/** Files that each include the next one twice (19 bytes a line). */
function doublingTree(levels: number): Record<string, string> {
  const files: Record<string, string> = { [MAIN]: "include f0.conf;\n" };
  for (let i = 0; i < levels; i++) {
    files[`/n/conf/f${i}.conf`] = i + 1 < levels
      ? `include f${i + 1}.conf;\ninclude f${i + 1}.conf;\n`
      : "# leaf\n";
  }
  return files;
}

/** `n` one-line files taken in by one glob. */
function wideGlob(n: number): Record<string, string> {
  const files: Record<string, string> = {
    [MAIN]: "http {\ninclude parts/*.conf;\n}\n",
  };
  for (let i = 0; i < n; i++) files[`/n/conf/parts/${i}.conf`] = "# part\n";
  return files;
}

/** A `types {}` block including a file of `n` entries. */
function bigTypes(n: number): Record<string, string> {
  return {
    [MAIN]: "http {\ntypes {\ninclude big.types;\n}\n}\n",
    "/n/conf/big.types": "a b;\n".repeat(n),
  };
}

/** `count` files of `n` entries each, for one `types {}` block. */
function manyTypes(count: number, n: number): Record<string, string> {
  const files: Record<string, string> = {
    [MAIN]: "http {\ntypes {\ninclude t/*.types;\n}\n}\n",
  };
  for (let i = 0; i < count; i++) {
    files[`/n/conf/t/${String(i).padStart(3, "0")}.types`] = "a b;\n"
      .repeat(n);
  }
  return files;
}

/** File access that counts the files read. */
function counting(io: ConfIo): ConfIo & { reads: number } {
  const counted = {
    reads: 0,
    readTextFile(path: string) {
      counted.reads++;
      return io.readTextFile(path);
    },
    readDirFiles: (path: string) => io.readDirFiles(path),
  };
  return counted;
}

// `http` and `types` count as directives too: the entry that passes the
// limit is two before the limit's number.
const CASES: {
  name: string;
  files: Record<string, string>;
  message: string;
  maxReads: number;
}[] = [
  {
    name: "15 files that each include the next twice (2^15 reads)",
    files: doublingTree(15),
    message: `more than ${MAX_INCLUDED_FILES} files included in f13.conf:1`,
    maxReads: MAX_INCLUDED_FILES,
  },
  {
    name: "64 files: 16 levels of 4 that each include the next level",
    files: fanOutTree(16, 4),
    message: `more than ${MAX_INCLUDED_FILES} files included in 1.conf:1`,
    maxReads: MAX_INCLUDED_FILES,
  },
  {
    name: "a glob over 20,000 one-line files",
    files: wideGlob(20_000),
    message: `more than ${MAX_INCLUDED_FILES} files included in nginx.conf:2`,
    maxReads: MAX_INCLUDED_FILES,
  },
  {
    name: "an 800,000-entry types {} include",
    files: bigTypes(800_000),
    message: `more than ${MAX_DIRECTIVES} directives in big.types:${
      MAX_DIRECTIVES - 1
    }`,
    maxReads: 2,
  },
  {
    name: "200 files of 1,000 types {} entries",
    files: manyTypes(200, 1000),
    message: `more than ${MAX_DIRECTIVES} directives in 099.types:999`,
    maxReads: 101,
  },
];

for (const { name, files, message, maxReads } of CASES) {
  Deno.test(`parseNginxConf() bounds ${name}`, () => {
    const io = counting(memoryIo(files));
    let said = "parsed";
    try {
      parseNginxConf(MAIN, io);
    } catch (error) {
      said = (error as Error).message.replace(/\S*[\\/]/g, "");
    }
    strictEqual(said, message);
    ok(io.reads <= maxReads, `${io.reads} files read`);
  });
}

Deno.test("parseNginxConf() reads a 100,000-entry types {} include whole", () => {
  const directives = parseNginxConf(
    MAIN,
    memoryIo(bigTypes(MAX_DIRECTIVES - 3)),
  );
  strictEqual(directives[0]?.block?.[0]?.block?.length, MAX_DIRECTIVES - 3);
});

/**
 * Writes a generated tree under `dir`, keeping the relative names: each
 * folder made once, the files written synchronously (20,000 small files
 * through the async file API cost seconds of thread hand-offs each run).
 */
function writeTree(dir: string, files: Record<string, string>): string {
  const made = new Set<string>();
  for (const [path, text] of Object.entries(files)) {
    const to = join(dir, path);
    const folder = dirname(to);
    if (!made.has(folder)) {
      Deno.mkdirSync(folder, { recursive: true });
      made.add(folder);
    }
    Deno.writeTextFileSync(to, text);
  }
  return join(dir, MAIN);
}

// Peak RSS is Linux's VmHWM: the child reads its own /proc.
const BUDGET_MIB = 200;
// On disk a glob needs only to pass MAX_INCLUDED_FILES: the parser's bound
// over 20,000 names is the in-memory case above, and each file made here
// costs about a millisecond of a loaded disk.
const ON_DISK_FILES = 2 * MAX_INCLUDED_FILES + 500;
const ON_DISK: [string, Record<string, string>, RegExp][] = [
  ["15 doubling files", doublingTree(15), /more than 1024 files included/],
  ["64 fanning files", fanOutTree(16, 4), /more than 1024 files included/],
  [
    `${ON_DISK_FILES} files`,
    wideGlob(ON_DISK_FILES),
    /more than 1024 files included/,
  ],
  ["800,000 types", bigTypes(800_000), /more than 100000 directives/],
];
// One child reads every tree (a process costs about 0.25 s of CPU to
// start): its peak after each tree is at least that tree's, so each line
// under the budget holds each tree under it.
Deno.test({
  name: `--nginx-conf on disk: hostile trees stay under ${BUDGET_MIB} MB`,
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    const dir = await Deno.makeTempDir();
    try {
      const mains = ON_DISK.map(([, files], i) =>
        writeTree(join(dir, String(i)), files)
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-q",
          "-A",
          new URL("./_read_conf_child.ts", import.meta.url).pathname,
          ...mains,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      strictEqual(out.code, 0, stderr);
      const results = new TextDecoder().decode(out.stdout).trim().split("\n")
        .map((l) => JSON.parse(l));
      strictEqual(results.length, ON_DISK.length);
      for (const [i, [name, , message]] of ON_DISK.entries()) {
        await t.step(name, () => {
          const result = results[i]!;
          ok(message.test(result.message), result.message);
          ok(result.peakMiB < BUDGET_MIB, `peak ${result.peakMiB} MiB`);
        });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
