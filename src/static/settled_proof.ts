/**
 * The `settled` witness of containment: proves that an open handle's file
 * lies inside the root with path look-ups alone, which is all Deno offers
 * under `--allow-read` (no `openat`, no `O_NOFOLLOW`, no path of a handle).
 *
 * A path look-up can be redirected by a folder on the path swapped for a
 * link and back in between two calls, so no one look-up proves anything. But
 * a folder cannot change which object one of its names refers to without
 * its own change time moving to the present: `rename`, `link`, `unlink`,
 * `symlink`, `mkdir` and `rmdir` update the parent's `st_ctime` (POSIX; NTFS
 * `ChangeTime` alike), and no call sets a change time back on Linux. So:
 *
 * 1. `t` is taken; each folder below the root on the path is `lstat`ed: it
 *    must be a folder, not a link, and its identity is kept;
 * 2. the file's entry is `lstat`ed: not a link, and the handle's file
 *    (device and inode, `sameFile`);
 * 3. the root and each folder again, top down: the same folders, and none
 *    changed since `t - SETTLE_MS`.
 *
 * Then the root did not change from `t` to its second look, so its entry for
 * the first folder named that folder throughout, which did not change until
 * its own second look, and so on down: the look-up in step 2, made in that
 * span, went through these very folders, and the handle's file is the one
 * named inside the root. `SETTLE_MS` covers the coarse clock file systems
 * stamp times with (a jiffy on Linux, 15.6 ms on Windows); a change time
 * Deno reports in whole seconds counts as the end of its second, so after a
 * change a folder settles within about a second.
 *
 * A folder changed lately is not yet proof: the caller
 * waits and asks again ({@linkcode Proof} `unsettled`). A path through a
 * link inside the root is proved on its real path the same way. A file once
 * proved is remembered by the root and path it was proved for with its
 * identity, size and times (4,096 at most), so a served file costs no
 * look-up at all until it changes; an inode number reused by a file
 * elsewhere differs in its birth time, size or mtime. The root and path are
 * part of what is remembered: a file proved inside one location's folder
 * (`alias /srv/private/`) says nothing of a link reaching it from another's
 * (`root /srv/html`, `/srv/html/lnk -> ../private`).
 *
 * On Windows a user who may write a folder's attributes can set its
 * `ChangeTime` (`SetFileInformationByHandle`); the README says what that
 * leaves.
 *
 * @module
 */

import { isAbsolute, join, relative, sep } from "node:path";

/**
 * A point of `openInsideRoot` where another process could change what a
 * name refers to: each comes just before a system call of its own, and the
 * calls are synchronous, so no await lies between them.
 *
 * - `open`: the open of the path (everything before it, the handler's
 *   `stat` and the cache's look-up included, sees the same names);
 * - `fstat`: the handle's `fstat`;
 * - `folder`: the first look (`lstat`) at a folder below the root, step 1
 *   of the module doc;
 * - `entry`: the `lstat` of the file's own entry, step 2;
 * - `root`: the second look at the root, step 3;
 * - `folder-again`: the second look at a folder below it, step 3;
 * - `realpath`: the real paths of the root and the file (a path through a
 *   link inside the root; the kernel witness's real root);
 * - `open-again`, `readlink`: the kernel witness's second open and its
 *   question to `/proc/self/fd`;
 * - `proved`: the file is proved; what follows reads the handle only.
 */
export type ContainmentStep =
  | "open"
  | "fstat"
  | "folder"
  | "entry"
  | "root"
  | "folder-again"
  | "realpath"
  | "open-again"
  | "readlink"
  | "proved";

/**
 * Called at each {@linkcode ContainmentStep} with the path the next call
 * looks up: a test's seam, to swap a name for a link exactly there.
 */
export type ContainmentHook = (step: ContainmentStep, path: string) => void;

/** The seam of `openInsideRoot` and {@linkcode proveSettledInside}. */
export interface StepOptions {
  /** Called before each system call; none in the gateway. */
  hook?: ContainmentHook | undefined;
}

/** No hook: the gateway's, shared so that no call allocates one. */
export const NO_STEPS: StepOptions = Object.freeze({});

/** How long every folder on a path must have been unchanged. */
export const SETTLE_MS = 50;
/**
 * The longest a request waits for the folders on its path to settle
 * (`unsettled`), a file's or a listing's; then it is answered 404.
 */
export const MAX_SETTLE_WAIT_MS = 2500;
const MAX_KNOWN = 4096;

/** What {@linkcode proveSettledInside} found. */
export type Proof =
  | { kind: "inside" }
  | { kind: "outside" }
  /** A folder on the path changed lately: ask again after `retryInMs`. */
  | { kind: "unsettled"; retryInMs: number };

const INSIDE: Proof = { kind: "inside" };
const OUTSIDE: Proof = { kind: "outside" };

/**
 * What must be read through the proved name while the proof holds (a
 * folder's entries): called with the path to read, between the first and
 * the second look at the folders, so any look-up it makes went through the
 * very folders proved. A proof made for it neither uses nor fills the
 * remembered identities: the reading has to lie inside the bracket.
 */
export type Within = (at: string) => void;

/** Roots, paths and identities proved inside, least recently used first. */
const known = new Map<string, true>();

/**
 * Whether two `stat`s describe the same file: device and inode where the
 * platform reports them, else size, mtime and birth time.
 *
 * @param a One `stat`.
 * @param b Another.
 * @returns Whether they are the same file.
 *
 * @example Usage
 * ```ts
 * import { sameFile } from "./settled_proof.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a`, "1");
 * Deno.writeTextFileSync(`${dir}/b`, "1");
 * strictEqual(sameFile(Deno.statSync(`${dir}/a`), Deno.statSync(`${dir}/a`)), true);
 * strictEqual(sameFile(Deno.statSync(`${dir}/a`), Deno.statSync(`${dir}/b`)), false);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  if (a.ino !== null && b.ino !== null) {
    return a.ino === b.ino && a.dev === b.dev;
  }
  return a.size === b.size &&
    a.mtime?.getTime() === b.mtime?.getTime() &&
    a.birthtime?.getTime() === b.birthtime?.getTime();
}

/**
 * What is remembered of a proof: the root and the path it was made for
 * (NUL, which no path holds, between them) and the file's identity; none
 * without an inode.
 */
function proofKey(
  root: string,
  path: string,
  info: Deno.FileInfo,
): string | null {
  if (info.ino === null) return null;
  return `${root}\0${path}\0${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}:${info.birthtime?.getTime()}`;
}

/**
 * The latest time a folder can have changed which objects its names refer
 * to. Deno 2.9.6 gives Linux's `st_ctime` in whole seconds (the nanoseconds
 * are dropped), so such a time stands for its whole second; `mtime`, which
 * anyone who may write the folder can set back, only where no change time
 * is reported.
 */
function changedAt(info: Deno.FileInfo): number {
  const ctime = info.ctime?.getTime();
  if (ctime === undefined) return info.mtime?.getTime() ?? Infinity;
  return ctime % 1000 === 0 ? ctime + 999 : ctime;
}

/**
 * Proves the file an open handle holds inside `root` (see the module doc).
 * Throws when a look-up fails (the caller refuses the file then).
 *
 * @param root The client-app folder.
 * @param path The name the handle was opened by, below `root`.
 * @param info The handle's `fstat`.
 * @param options A hook called before each look-up (a test's seam).
 * @param within A reading to make while the proof holds (see
 * {@linkcode Within}); its outcome counts only when the proof is `inside`.
 * @returns `inside`, `outside`, or `unsettled` with when to ask again.
 *
 * @example Usage
 * ```ts
 * import { proveSettledInside } from "./settled_proof.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/a.js`, "1");
 * using file = Deno.openSync(`${root}/a.js`);
 * const proof = proveSettledInside(root, `${root}/a.js`, file.statSync());
 * // Just written: the root changed a moment ago.
 * strictEqual(proof.kind, "unsettled");
 * Deno.removeSync(root, { recursive: true });
 * ```
 */
export function proveSettledInside(
  root: string,
  path: string,
  info: Deno.FileInfo,
  options: StepOptions = NO_STEPS,
  within?: Within,
): Proof {
  const { hook } = options;
  const key = within === undefined ? proofKey(root, path, info) : null;
  if (key !== null && known.delete(key)) {
    known.set(key, true);
    return INSIDE;
  }
  const started = Date.now();
  let proof = provedChain({ root, path, info, started, hook, within });
  if (proof === "link") {
    // A link inside the root: proved on the real path, from the real root.
    hook?.("realpath", path);
    const realRoot = Deno.realPathSync(root);
    const real = Deno.realPathSync(path);
    proof = provedChain({
      root: realRoot,
      path: real,
      info,
      started,
      hook,
      within,
    });
    if (proof === "link") return OUTSIDE;
  }
  if (proof.kind === "inside" && key !== null) {
    known.set(key, true);
    if (known.size > MAX_KNOWN) known.delete(known.keys().next().value!);
  }
  return proof;
}

/**
 * Steps 1 to 3 of the module doc; `link` when the path holds one. The
 * entry may be a folder (a listing's), and then the root itself: the root
 * is what every path is measured from, so it is read as it is named.
 */
function provedChain(
  { root, path, info, started, hook, within }: {
    root: string;
    path: string;
    info: Deno.FileInfo;
    started: number;
    hook: ContainmentHook | undefined;
    within: Within | undefined;
  },
): Proof | "link" {
  const rel = relative(root, path);
  if (rel === "") {
    // An alias naming a file (`location = /favicon.ico { alias …/f.ico; }`)
    // is its own folder: inside when what was opened is what that
    // configured name designates now (its path is the configuration's,
    // links too, as a root's own path is).
    if (info.isFile) {
      hook?.("root", root);
      return sameFile(Deno.statSync(root), info) ? INSIDE : OUTSIDE;
    }
    if (within === undefined || !info.isDirectory) return OUTSIDE;
    within(root);
    return INSIDE;
  }
  if (rel.startsWith("..") || isAbsolute(rel)) return OUTSIDE;
  const parts = rel.split(sep);
  const folders: Deno.FileInfo[] = [];
  let at = root;
  for (let i = 0; i < parts.length - 1; i++) {
    at = join(at, parts[i]!);
    hook?.("folder", at);
    const folder = Deno.lstatSync(at);
    if (folder.isSymlink) return "link";
    if (!folder.isDirectory) return OUTSIDE;
    folders.push(folder);
  }
  hook?.("entry", path);
  const entry = Deno.lstatSync(path);
  if (entry.isSymlink) return "link";
  if (!(entry.isFile || entry.isDirectory) || !sameFile(entry, info)) {
    return OUTSIDE;
  }
  within?.(path);
  hook?.("root", root);
  let latest = changedAt(Deno.statSync(root));
  at = root;
  for (let i = 0; i < folders.length; i++) {
    at = join(at, parts[i]!);
    hook?.("folder-again", at);
    const again = Deno.lstatSync(at);
    if (again.isSymlink || !sameFile(again, folders[i]!)) return OUTSIDE;
    latest = Math.max(latest, changedAt(again));
  }
  const wait = latest + SETTLE_MS - started;
  if (wait < 0) return INSIDE;
  return { kind: "unsettled", retryInMs: Math.min(1000, wait) + 1 };
}
