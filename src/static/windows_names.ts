/**
 * Names nginx for Windows refuses to open (`ngx_win32_check_filename`, and
 * DOS device names, which open a device wherever they appear): they could
 * name another stream of a file, a device, or another file by its short
 * name. nginx answers them as missing files (`ENOENT`).
 *
 * @module
 */

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
  for (const segment of relative.split(/[\\/]/)) {
    // Dots alone: nginx skips dots after a slash (its sw_after_slash).
    if (/^\.*$/.test(segment)) continue;
    if (segment.includes(":")) return true;
    if (/[. ]$/.test(segment)) return true;
    if (/~\d/.test(segment)) return true;
    if (isDosDeviceName(segment)) return true;
  }
  return false;
}

/**
 * Win32's device names, superscript digits included (`COM¹`), the
 * console's `CONIN$` and `CONOUT$`, and `CLOCK$`, which older Windows still
 * opens as a device.
 */
const DOS_DEVICE =
  /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$|clock\$)$/i;

/**
 * Whether a file name opens a device on Windows: Win32 compares the name
 * before its first dot, trailing spaces stripped (`RtlIsDosDeviceName_U`),
 * so `con`, `NUL.txt`, `com1 .js` and `conout$.log` all open a device (a
 * serial port, the console) wherever they appear in a path.
 *
 * @param segment One name of a path.
 * @returns Whether it names a device.
 *
 * @example Usage
 * ```ts
 * import { isDosDeviceName } from "./windows_names.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isDosDeviceName("COM1 .txt"), true);
 * strictEqual(isDosDeviceName("console.js"), false);
 * ```
 */
export function isDosDeviceName(segment: string): boolean {
  const dot = segment.indexOf(".");
  let end = dot < 0 ? segment.length : dot;
  // A loop, not `/ +$/`: that regex is quadratic on a long run of spaces.
  while (end > 0 && segment.charCodeAt(end - 1) === 0x20) end--;
  return end <= 7 && DOS_DEVICE.test(segment.slice(0, end));
}
