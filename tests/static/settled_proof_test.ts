/**
 * The `settled` witness of `openInsideRoot()` (the gateway's, under
 * `--allow-read`): a folder on the path swapped for a link at exact points
 * between the open and the look-ups, as a table. Each interleaving that
 * leaked through the old path check is refused, and a still folder is
 * proved.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { openInsideRoot } from "../../src/static/containment.ts";
import { proveSettledInside } from "../../src/static/settled_proof.ts";

const LINKS = Deno.build.os !== "windows"; // symlinks need a privilege there

/** A root with lib/a.js inside and secret/a.js outside. */
function tree() {
  const dir = Deno.makeTempDirSync();
  const root = join(dir, "html");
  const lib = join(root, "lib");
  const outside = join(dir, "secret");
  Deno.mkdirSync(lib, { recursive: true });
  Deno.mkdirSync(outside);
  Deno.writeTextFileSync(join(lib, "a.js"), "I");
  Deno.writeTextFileSync(join(outside, "a.js"), "X");
  const aside = join(root, ".inside");
  return {
    dir,
    root,
    lib,
    file: join(lib, "a.js"),
    toLink: () => {
      Deno.renameSync(lib, aside);
      Deno.symlinkSync(outside, lib);
    },
    toReal: () => {
      Deno.removeSync(lib);
      Deno.renameSync(aside, lib);
    },
  };
}

/** Opens `path` and proves it, as `openInsideRoot` does, closing it again. */
function prove(root: string, path: string): string {
  using file = Deno.openSync(path);
  return proveSettledInside(root, path, file.statSync()).kind;
}

/**
 * Waits (bounded) until the `settled` witness proves `path`, after the
 * `retryInMs` it names. It asks that witness itself, not `openInsideRoot()`:
 * a process that may read `/proc/self/fd` (`deno test -A`) proves with the
 * kernel there, which needs no settling, and the checks after this wait
 * would meet a folder still unsettled.
 */
async function settled(root: string, path: string): Promise<void> {
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    const proof = (() => {
      using file = Deno.openSync(path);
      return proveSettledInside(root, path, file.statSync());
    })();
    if (proof.kind === "inside") return;
    strictEqual(proof.kind, "unsettled");
    await new Promise((r) => setTimeout(r, proof.retryInMs));
  }
  throw new Error(`"${path}" did not settle within 5 s`);
}

/**
 * Runs `body` with `Deno.openSync` or `Deno.lstatSync` hooked: `before` and
 * `after` run around each call on `path`.
 */
function around(
  name: "openSync" | "lstatSync",
  path: string,
  before: () => void,
  after: () => void,
): <T>(body: () => T) => T {
  return (body) => {
    const runtime = Deno as unknown as Record<string, unknown>;
    const real = runtime[name] as (p: string | URL, o?: unknown) => unknown;
    runtime[name] = (p: string | URL, o?: unknown) => {
      if (String(p) !== path) return real(p, o);
      before();
      try {
        return real(p, o);
      } finally {
        after();
      }
    };
    try {
      return body();
    } finally {
      runtime[name] = real;
    }
  };
}

/** The `fstat` of a handle on `path`, closed again. */
function withHandle(path: string): Deno.FileInfo {
  using file = Deno.openSync(path);
  return file.statSync();
}

Deno.test(
  "proveSettledInside() refuses a folder on the path swapped for a link at exact points",
  { ignore: !LINKS },
  async (t) => {
    const cases: [string, "open" | "open+entry", string][] = [
      // The handle is the outside file; the entry looked up is the inside.
      ["a link at the open only", "open", "outside"],
      // The old path check's leak: the entry's look-up also goes through
      // the link, so the identities match; the root's change time does not.
      [
        "a link at the open and at the entry's look-up",
        "open+entry",
        "unsettled",
      ],
    ];
    for (const [name, when, want] of cases) {
      await t.step(name, async () => {
        const { dir, root, file, toLink, toReal } = tree();
        try {
          await settled(root, file);
          // The link in place at the open only: what the handle holds.
          const info = around("openSync", file, toLink, toReal)(() =>
            withHandle(file)
          );
          const prove = () => proveSettledInside(root, file, info).kind;
          const kind = when === "open+entry"
            ? around("lstatSync", file, toLink, toReal)(prove)
            : prove();
          strictEqual(kind, want);
          // And through openInsideRoot, with the link in place at the open.
          const opened = around("openSync", file, toLink, toReal)(() =>
            openInsideRoot(root, file)
          );
          if (opened.kind === "opened") opened.file.close();
          ok(opened.kind !== "opened", opened.kind);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      });
    }
  },
);

Deno.test("proveSettledInside() waits for a folder changed a moment ago, then proves its file", async () => {
  const { dir, root, file } = tree();
  try {
    strictEqual(prove(root, file), "unsettled");
    await settled(root, file);
    strictEqual(prove(root, file), "inside");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "proveSettledInside() knows a proved file while its folder keeps changing, and no other",
  { ignore: !LINKS },
  async () => {
    const { dir, root, lib, file, toLink, toReal } = tree();
    try {
      await settled(root, file);
      await Deno.writeTextFile(join(root, "new.js"), "N");
      // The root just changed: the known file is still inside, a new one
      // (and the outside one, through a link) cannot be proved yet.
      deepStrictEqual(
        [prove(root, file), prove(root, join(root, "new.js"))],
        ["inside", "unsettled"],
      );
      toLink();
      try {
        strictEqual(prove(root, join(lib, "a.js")), "outside");
      } finally {
        toReal();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "proveSettledInside() remembers a proof for its root and path only: a link from another root to a proved file is outside",
  { ignore: !LINKS },
  async () => {
    const { dir, root } = tree();
    try {
      // secret/a.js is another location's (`alias $D/secret/`); html/out
      // leads there from the root.
      const secret = join(dir, "secret");
      const outside = join(secret, "a.js");
      await Deno.symlink("../secret", join(root, "out"));
      await settled(secret, outside);
      const through = join(root, "out", "a.js");
      // Twice: the first answer must not be remembered as the file's.
      deepStrictEqual(
        [
          prove(secret, outside),
          prove(root, through),
          prove(secret, outside),
          prove(root, through),
        ],
        ["inside", "outside", "inside", "outside"],
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
