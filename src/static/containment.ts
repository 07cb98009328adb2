/**
 * Containment of a location's folder, by construction. Where a path is
 * made of decoded segments (dot segments already resolved, as the
 * built-in error pages' files are), every segment that could name
 * something else on some file system is refused ({@linkcode isSafeSegment}) — `/`, `\`, NUL and control characters, `:` (drive letters, NTFS
 * streams such as `::$DATA`), trailing dots and spaces (Windows strips them),
 * dotfiles, and on Windows 8.3 short names (nginx:
 * `ngx_win32_check_filename`) and DOS device names such as `con` or
 * `nul.txt`.
 *
 * Symlinks (and junctions) are followed only when what was opened is inside
 * the root, decided on the open handle, so a name swapped for a link between
 * a check and the open changes nothing ({@linkcode openInsideRoot}). The
 * file is opened first and its identity taken (`fstat`: device and inode);
 * the bytes then come from that handle only, so a swap after the check is
 * harmless. What proves the handle's file inside the root is chosen once per
 * process ({@linkcode CONTAINMENT_WITNESS}), never per call: a check that
 * falls back when its first witness errs takes the weaker one exactly when
 * an error can be provoked.
 *
 * - `kernel` (Linux, when Deno lets the process read `/proc/self/fd`): the
 *   kernel's own path of a second descriptor on the same name
 *   (`readlink /proc/self/fd/N`, `node:fs` gives the descriptor number),
 *   which must lie below the root's real path and hold the same device and
 *   inode. Both are facts about open descriptors. Deno refuses `/proc/self`,
 *   `/proc/<pid>` and `/dev/fd` without `--allow-all`, so under the
 *   gateway's `--allow-read` this witness is absent.
 * - `settled` (Windows, and Linux without it): path look-ups bracketed by
 *   the change times of the folders on the path (`static/settled_proof.ts`):
 *   a folder swapped for a link and back in between moves its parent's
 *   change time, so it is caught; a folder changed in the last 50 ms is
 *   waited for (`unsettled`). A file proved once is known by its root, path
 *   and identity.
 * - Under Wine, Unix symlinks are no reparse points and `lstat` follows
 *   them, so there this check cannot tell a link from its target; Wine is
 *   no witness for the Windows branch.
 * - Where no inode is reported (`ino` null), size, mtime and birth time
 *   stand in for it.
 *
 * A folder's listing (`autoindex`) is proved by the same witness
 * ({@linkcode readInsideRoot}): the folder is read inside the proof, through
 * the kernel's descriptor or between the settled proof's two looks, so a
 * listing shows nothing a file there could not be served from.
 *
 * @module
 */

import { sep } from "node:path";
import type { OsFamily } from "../runtime/mod.ts";
import {
  NO_STEPS,
  type Proof,
  proveSettledInside,
  sameFile,
  type StepOptions,
  type Within,
} from "./settled_proof.ts";
import { isDosDeviceName } from "./windows_names.ts";

export { sameFile };
export type {
  ContainmentHook,
  ContainmentStep,
  StepOptions,
} from "./settled_proof.ts";

/** How {@linkcode openInsideRoot} proves a file inside the root. */
export type ContainmentWitness = "kernel" | "settled";

/**
 * This process's witness (see the module doc): `kernel` on Linux when
 * `/proc/self/fd` can be read, else `settled`.
 */
export const CONTAINMENT_WITNESS: ContainmentWitness =
  Deno.build.os === "linux" && procFdReadable() ? "kernel" : "settled";

// `node:fs` hands out descriptor numbers, which `/proc/self/fd` needs. It
// costs the process some 4 MB, so it is loaded only where the kernel is the
// witness: not on Windows, and not under the gateway's own permissions.
const nodeFs = CONTAINMENT_WITNESS === "kernel"
  ? await import("node:fs")
  : null;

function procFdReadable(): boolean {
  try {
    return Deno.statSync("/proc/self/fd").isDirectory;
  } catch {
    return false; // not mounted, or refused without --allow-all
  }
}

/**
 * Tells whether a decoded path segment is safe to use as a file name.
 *
 * @param segment A decoded segment.
 * @param family The platform's rules.
 * @returns Whether it may be served.
 *
 * @example Usage
 * ```ts
 * import { isSafeSegment } from "./containment.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isSafeSegment("app.js", "linux"), true);
 * strictEqual(isSafeSegment("index.html::$DATA", "windows"), false);
 * strictEqual(isSafeSegment(".env", "linux"), false);
 * ```
 */
export function isSafeSegment(segment: string, family: OsFamily): boolean {
  if (segment === "" || segment.startsWith(".")) return false;
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f/\\:]/.test(segment)) return false;
  if (/[. ]$/.test(segment)) return false;
  if (family === "windows") {
    if (/~\d/.test(segment)) return false; // 8.3 short names
    if (isDosDeviceName(segment)) return false;
    if (/[<>"|?*]/.test(segment)) return false; // invalid in Win32 names
  }
  return true;
}

/** What {@linkcode openInsideRoot} found. */
export type OpenedFile =
  | {
    kind: "opened";
    /** The open file; the caller closes it. */
    file: Deno.FsFile;
    /** Its `fstat`: what is served, whatever the name points at by now. */
    info: Deno.FileInfo;
  }
  | { kind: "outside" }
  /** A folder on the path changed lately: open again after `retryInMs`. */
  | { kind: "unsettled"; retryInMs: number }
  | { kind: "failed"; error: unknown };

/**
 * Opens `path` for reading and proves that the file opened lies inside
 * `root` (see the module doc); a file that does not is closed again.
 *
 * @param root The client-app folder.
 * @param path A file below it, as joined from safe segments.
 * @param options A hook called before each system call of the open and its
 * proof (`ContainmentStep`), so a test can swap a name exactly there.
 * @returns The open file and its `fstat`, `outside`, `unsettled` (nothing
 * is held open then), or the open's error.
 */
export function openInsideRoot(
  root: string,
  path: string,
  options: StepOptions = NO_STEPS,
): OpenedFile {
  const { hook } = options;
  let file: Deno.FsFile;
  try {
    hook?.("open", path);
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    return { kind: "failed", error };
  }
  let outcome: OpenedFile = { kind: "outside" };
  try {
    hook?.("fstat", path);
    const info = file.statSync();
    const proof = provedInside(root, path, info, options);
    if (proof.kind === "inside") {
      hook?.("proved", path);
      return { kind: "opened", file, info };
    }
    if (proof.kind === "unsettled") outcome = proof;
  } catch {
    // Vanished, unreadable, or the witness could not answer: not proved.
  }
  file.close();
  return outcome;
}

/** What {@linkcode readInsideRoot} found. */
export type ReadInside<T> =
  | {
    kind: "inside";
    /** The `stat` of what the path names (links followed). */
    info: Deno.FileInfo;
    /** What `read` returned. */
    value: T;
  }
  | { kind: "outside" }
  /** A folder on the path changed lately: read again after `retryInMs`. */
  | { kind: "unsettled"; retryInMs: number }
  /** The `stat`, or `read`, failed inside the root. */
  | { kind: "failed"; error: unknown };

/**
 * Reads what `path` names (a folder's entries) only once it is proved inside
 * `root` by the same witness and proof as {@linkcode openInsideRoot}, and
 * through the very object proved: `read` runs inside the proof's bracket
 * (`settled`: between the two looks at the folders on the path, given the
 * path proved), or on the kernel's descriptor (`kernel`:
 * `/proc/self/fd/N`). Deno opens no folder as a handle on every platform,
 * so the object is known by its `stat` instead of an `fstat`.
 *
 * @param root The location's folder.
 * @param path A folder (or file) below it, or the root itself.
 * @param read Reads through the path it is given; synchronous, so no other
 * request runs inside the bracket. What it throws is `failed`.
 * @param options The test's seam (`ContainmentStep`).
 * @returns What `read` returned, with the `stat`; or why not.
 */
export function readInsideRoot<T>(
  root: string,
  path: string,
  read: (at: string) => T,
  options: StepOptions = NO_STEPS,
): ReadInside<T> {
  let info: Deno.FileInfo;
  try {
    options.hook?.("open", path);
    info = Deno.statSync(path);
  } catch (error) {
    return { kind: "failed", error };
  }
  const got: { read?: { value: T } | { error: unknown } } = {};
  const within: Within = (at) => {
    try {
      got.read = { value: read(at) };
    } catch (error) {
      got.read = { error };
    }
  };
  let proof: Proof;
  try {
    proof = provedInside(root, path, info, options, within);
  } catch {
    // Vanished, unreadable, or the witness could not answer: not proved.
    return { kind: "outside" };
  }
  if (proof.kind !== "inside") return proof;
  const done = got.read;
  if (done === undefined) return { kind: "outside" };
  if ("error" in done) return { kind: "failed", error: done.error };
  return { kind: "inside", info, value: done.value };
}

/** Whether the file `info` describes (an open handle's) lies inside `root`. */
function provedInside(
  root: string,
  path: string,
  info: Deno.FileInfo,
  options: StepOptions,
  within?: Within,
): Proof {
  if (nodeFs !== null && CONTAINMENT_WITNESS === "kernel") {
    const opened = kernelPath(nodeFs, path, options, within);
    options.hook?.("realpath", root);
    return opened.ino === info.ino && opened.dev === info.dev &&
        isBelow(Deno.realPathSync(root), opened.path)
      ? { kind: "inside" }
      : { kind: "outside" };
  }
  return proveSettledInside(root, path, info, options, within);
}

/**
 * Opens `path` once more and asks the kernel where that descriptor's file
 * is (`/proc/self/fd/N`), with its identity; `within` reads through that
 * descriptor. Throws when it cannot tell: the caller then refuses the file.
 */
function kernelPath(
  fs: typeof import("node:fs"),
  path: string,
  { hook }: StepOptions,
  within: Within | undefined,
): { path: string; dev: number; ino: number } {
  hook?.("open-again", path);
  const fd = fs.openSync(path, "r");
  try {
    hook?.("readlink", path);
    const where = Deno.readLinkSync(`/proc/self/fd/${fd}`);
    const { dev, ino } = fs.fstatSync(fd);
    within?.(`/proc/self/fd/${fd}`);
    return { path: where, dev, ino };
  } finally {
    fs.closeSync(fd);
  }
}

function isBelow(realRoot: string, real: string): boolean {
  // A root that ends in its separator (`/`, `C:\`) is its own prefix.
  const prefix = realRoot.endsWith(sep) ? realRoot : realRoot + sep;
  return real === realRoot || real.startsWith(prefix);
}
