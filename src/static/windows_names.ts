/**
 * Names nginx for Windows refuses to open (`ngx_win32_check_filename`, and
 * DOS device names, which open a device wherever they appear): they could
 * name another stream of a file, a device, or another file by its short
 * name. nginx answers them as missing files (`ENOENT`).
 *
 * The rules are `runtime/request_path.ts`'s, the one check every path a
 * request made passes before an OS call.
 *
 * @module
 */

import { isDosDeviceName, refusedWindowsPath } from "../runtime/mod.ts";

/**
 * Tells whether a path below the root is one nginx for Windows would not
 * open: a segment with `:` (NTFS streams such as `::$DATA`), a trailing
 * dot or space (Windows strips it, so it names another file), an 8.3 short
 * name (`PROGRA~1`), or a DOS device name with any extension (`con`,
 * `NUL.txt`, `com1 .js`: {@linkcode isDosDeviceName}). Dot-files are
 * ordinary names.
 *
 * @param relative The path below the root, `/` or `\` separated.
 * @returns Whether to answer it as missing.
 *
 * @example Usage
 * ```ts
 * import { isRefusedWindowsName } from "./windows_names.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isRefusedWindowsName("/index.html::$DATA"), true);
 * strictEqual(isRefusedWindowsName("/assets/NUL.js"), true);
 * strictEqual(isRefusedWindowsName("/.well-known/app.json"), false);
 * ```
 */
export function isRefusedWindowsName(relative: string): boolean {
  return refusedWindowsPath(relative, 0);
}

export { isDosDeviceName };
