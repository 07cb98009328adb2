/**
 * A file name as the kernel's `open()` and `stat()` read it, where Deno
 * would read it otherwise. nginx hands a name to the OS as it is
 * (`ngx_open_cached_file`): an internal URI (`error_page 404 /a/../b`,
 * `try_files $uri/../x`, a rewrite) may bring `.` and `..` components, and
 * a URI's trailing slash follows a file's name (`/r.txt/` under
 * `try_files $uri`). POSIX resolves `a/..` by looking `a` up as a folder
 * and taking its parent, the folder a link leads to included, and a name
 * with a trailing slash must be a folder (`ENOENT`, `ENOTDIR` otherwise).
 * Deno run with granular permissions (the gateway's `--allow-read`)
 * normalises a name lexically before the system call: `none/../r.txt`
 * and `r.txt/` both open `r.txt`. So such a name is resolved here, one
 * component at a time, with looks that have no dot components left.
 *
 * Windows' own path parsing (`GetFullPathNameW`, inside `CreateFileW`)
 * removes dot components lexically, as Deno does: there the name is left
 * as it is.
 *
 * @module
 */

import type { OsFamily } from "../runtime/mod.ts";
import { currentOsFamily } from "../runtime/mod.ts";

/** A `.` or `..` component, or a trailing slash. */
const NEEDS_KERNEL = /\/\.\.?(?:\/|$)|\/$/;

/**
 * The name the kernel would open for `path`, or the error its `open()`
 * would fail with (`ENOENT`, `ENOTDIR`, as Deno's errors so nginx's line
 * and status come from them). A name without dot components or a trailing
 * slash is returned as it is, with no system call and no allocation (the
 * static files' common path).
 *
 * @param path The name, absolute, as nginx would open it.
 * @param family The platform's rules; Windows names are returned as they are.
 * @returns The name to open, or the error.
 *
 * @example Usage
 * ```ts
 * import { kernelName } from "./os_names.ts";
 * import { ok, strictEqual } from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${dir}/d`);
 * Deno.writeTextFileSync(`${dir}/r.txt`, "r");
 * strictEqual(kernelName(`${dir}/r.txt`, "linux"), `${dir}/r.txt`);
 * strictEqual(kernelName(`${dir}/d/../r.txt`, "linux"), `${dir}/r.txt`);
 * ok(kernelName(`${dir}/none/../r.txt`, "linux") instanceof Deno.errors.NotFound);
 * ok(kernelName(`${dir}/r.txt/`, "linux") instanceof Deno.errors.NotADirectory);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function kernelName(
  path: string,
  family: OsFamily = currentOsFamily(),
): string | Error {
  if (family === "windows" || !NEEDS_KERNEL.test(path)) return path;
  return resolvedName(path);
}

/** Walks the components as the kernel's `namei` does. */
function resolvedName(path: string): string | Error {
  const parts = path.split("/");
  let at = path.startsWith("/") ? "" : ".";
  for (const part of parts) {
    if (part === "") continue;
    if (part !== "." && part !== "..") {
      at = `${at}/${part}`;
      continue;
    }
    // `a/.` and `a/..` look `a` up as a folder (ENOENT, ENOTDIR).
    const failed = notAFolder(at === "" ? "/" : at);
    if (failed !== null) return failed;
    if (part === "..") at = parentOf(at);
  }
  if (path.endsWith("/")) {
    const failed = notAFolder(at === "" ? "/" : at);
    if (failed !== null) return failed;
  }
  return at === "" ? "/" : at;
}

/**
 * The parent of the folder `at` leads to, not of its name; spelled as
 * `at`'s own parent when that is the same folder (no link on the way), so
 * the name still reads as below the location's folder.
 */
function parentOf(at: string): string {
  const real = Deno.realPathSync(at === "" ? "/" : at);
  const parent = real.slice(0, Math.max(real.lastIndexOf("/"), 0));
  const named = at.slice(0, Math.max(at.lastIndexOf("/"), 0));
  if (named === "" || named === ".") return parent;
  return Deno.realPathSync(named) === (parent === "" ? "/" : parent)
    ? named
    : parent;
}

/** Why `path` is no folder to look a name up in, or `null` when it is one. */
function notAFolder(path: string): Error | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (error) {
    return error instanceof Error
      ? error
      : new Deno.errors.NotFound(String(error));
  }
  return info.isDirectory
    ? null
    : new Deno.errors.NotADirectory("Not a directory (os error 20)");
}
