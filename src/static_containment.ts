/**
 * Containment of the client-app folder, by construction: the path arrives
 * as decoded segments from `routeRequest` (dot segments already resolved),
 * and every segment that could name something else on some file system is
 * refused — `/`, `\`, NUL and control characters, `:` (drive letters, NTFS
 * streams such as `::$DATA`), trailing dots and spaces (Windows strips them),
 * dotfiles, and on Windows 8.3 short names (nginx:
 * `ngx_win32_check_filename`) and DOS device names such as `con` or
 * `nul.txt`. A symlink that resolves outside the root is refused too.
 *
 * @module
 */

import { sep } from "node:path";
import type { OsFamily } from "./os_errors.ts";

/**
 * Tells whether a decoded path segment is safe to use as a file name.
 *
 * @param segment A decoded segment.
 * @param family The platform's rules.
 * @returns Whether it may be served.
 *
 * @example Usage
 * ```ts
 * import { isSafeSegment } from "./static_containment.ts";
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
    // DOS device names open devices, not files, with any extension
    // ("con", "NUL.txt", "com1.js").
    if (/^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i.test(segment)) {
      return false;
    }
    if (/[<>"|?*]/.test(segment)) return false; // invalid in Win32 names
  }
  return true;
}

/**
 * Containment of symlinks: whether the real path of `path` is `root`'s real
 * path or inside it. `false` when either cannot be resolved.
 *
 * @param root The client-app folder.
 * @param path A file below it, as joined from safe segments.
 * @returns Whether serving it stays inside the root.
 */
export function insideRoot(root: string, path: string): boolean {
  try {
    const realRoot = Deno.realPathSync(root);
    const realPath = Deno.realPathSync(path);
    return realPath === realRoot || realPath.startsWith(realRoot + sep);
  } catch {
    return false;
  }
}
