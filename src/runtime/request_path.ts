/**
 * The one check every file-system path a request made passes before any
 * OS call (`stat`, `open`, `readDir`, `realPath`): the phases' file tests
 * (`try_files`, `index`, `if (-f …)`), the static module, `auth_basic`'s
 * user file, `$realpath_root`. On Windows it refuses the names nginx for
 * Windows refuses before `CreateFileW` (`ngx_win32_check_filename`, called
 * by `ngx_open_file` and `ngx_file_info`): a `stat` of `…\html\COM1`
 * opens the serial port itself, which the station's own scanner or
 * printer program then cannot open. nginx answers them as a missing file
 * (`NGX_ENOENT`, 2): `try_files` goes on to its next name, `-f` is false,
 * the static module answers 404 with its `open()` line.
 *
 * It scans the path in place, with no string made: on Windows it runs for
 * each file test of each request.
 *
 * @module
 */

import type { OsFamily } from "./os_errors.ts";

/**
 * Whether a path a request made must not reach the OS: a NUL anywhere (no
 * OS takes one), and on Windows a name nginx for Windows refuses:
 *
 * - `:` in a name (an NTFS stream, `index.html::$DATA`), a name ending in
 *   `.` or ` ` (Win32 strips them, so it names another file): nginx's
 *   state machine, which skips what comes before the first slash (the
 *   drive, `C:`) and names of dots alone;
 * - a DOS device name with any extension, spaces before the dot stripped
 *   (`COM1`, `nul.txt`, `com1 .js`, `CONIN$`: {@linkcode isDosDeviceName});
 *   nginx's `GetLongPathNameW` fails on them before any open;
 * - from `from` on, an 8.3 short name (`~` and a digit, `PROGRA~1`), where
 *   nginx's long name would not match. Before `from` is the folder the
 *   configuration named, which may be written short (`C:\PROGRA~1\…`).
 *
 * The first two rules hold for the whole path: no folder on Windows has
 * such a name, and a root made of variables (`root html/$host`) is the
 * request's too.
 *
 * @param path The path, `/` or `\` separated.
 * @param family Whose names the OS opens.
 * @param from Where the request's own part begins (the root's length).
 * @returns Whether to answer it as a missing file without asking the OS.
 *
 * @example Usage
 * ```ts
 * import { refusedRequestPath } from "./request_path.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(refusedRequestPath("C:\\gw\\html\\COM1", "windows", 10), true);
 * strictEqual(refusedRequestPath("/srv/html/COM1", "linux", 9), false);
 * strictEqual(refusedRequestPath("C:\\PROGRA~1\\gw\\html\\a.js", "windows", 19), false);
 * ```
 */
export function refusedRequestPath(
  path: string,
  family: OsFamily,
  from = 0,
): boolean {
  if (path.includes("\0")) return true;
  return family === "windows" && refusedWindowsPath(path, from);
}

/**
 * The Windows rules of {@linkcode refusedRequestPath}, without the NUL.
 *
 * @param path The path, `/` or `\` separated.
 * @param from Where 8.3 short names start to be refused.
 * @returns Whether nginx for Windows refuses it.
 *
 * @example Usage
 * ```ts
 * import { refusedWindowsPath } from "./request_path.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(refusedWindowsPath("/assets/NUL.js", 0), true);
 * strictEqual(refusedWindowsPath("/.well-known/app.json", 0), false);
 * ```
 */
export function refusedWindowsPath(path: string, from: number): boolean {
  const n = path.length;
  // sw_start: what comes before the first slash is the drive (`C:`) or a
  // relative start nginx does not look at.
  let i = 0;
  while (i < n && !isSlash(path.charCodeAt(i))) i++;
  while (i < n) {
    while (i < n && isSlash(path.charCodeAt(i))) i++;
    const start = i;
    let dotsOnly = true;
    let last = 0;
    let shortName = false;
    for (; i < n; i++) {
      const c = path.charCodeAt(i);
      if (isSlash(c)) break;
      if (c === COLON) return true;
      if (c !== DOT) dotsOnly = false;
      if (c === TILDE && i + 1 < n && isDigit(path.charCodeAt(i + 1))) {
        shortName = true;
      }
      last = c;
    }
    // sw_after_slash: names of dots alone are skipped.
    if (i === start || dotsOnly) continue;
    if (last === DOT || last === SPACE) return true;
    if (shortName && i > from) return true;
    if (deviceNameAt(path, start, i)) return true;
  }
  return false;
}

/**
 * Whether a file name opens a device on Windows: Win32 compares the name
 * before its first dot, trailing spaces stripped (`RtlIsDosDeviceName_U`),
 * so `con`, `NUL.txt`, `com1 .js` and `conout$.log` all open a device (a
 * serial port, the console) wherever they appear in a path. The names:
 * `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9` and `LPT0`–`LPT9` (superscript
 * digits too, `COM¹`), the console's `CONIN$` and `CONOUT$`, and `CLOCK$`,
 * which older Windows still opens as a device.
 *
 * @param segment One name of a path.
 * @returns Whether it names a device.
 *
 * @example Usage
 * ```ts
 * import { isDosDeviceName } from "./request_path.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isDosDeviceName("COM1 .txt"), true);
 * strictEqual(isDosDeviceName("console.js"), false);
 * ```
 */
export function isDosDeviceName(segment: string): boolean {
  return deviceNameAt(segment, 0, segment.length);
}

/** {@linkcode isDosDeviceName} of `path`'s name from `start` to `end`. */
function deviceNameAt(path: string, start: number, end: number): boolean {
  let stop = start;
  while (stop < end && path.charCodeAt(stop) !== DOT) stop++;
  // A loop, not `/ +$/`: that regex is quadratic on a long run of spaces.
  while (stop > start && path.charCodeAt(stop - 1) === SPACE) stop--;
  switch (stop - start) {
    case 3:
      return sameAt(path, start, "con") || sameAt(path, start, "prn") ||
        sameAt(path, start, "aux") || sameAt(path, start, "nul");
    case 4:
      return (sameAt(path, start, "com") || sameAt(path, start, "lpt")) &&
        isPortDigit(path.charCodeAt(start + 3));
    case 6:
      return sameAt(path, start, "conin$") || sameAt(path, start, "clock$");
    case 7:
      return sameAt(path, start, "conout$");
    default:
      return false;
  }
}

/** Whether `path` holds `word` (lower case ASCII) at `at`, in any case. */
function sameAt(path: string, at: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    let c = path.charCodeAt(at + k);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** A port's digit: `0`–`9`, or `¹`, `²`, `³`, which Win32 takes too. */
function isPortDigit(c: number): boolean {
  return isDigit(c) || c === 0xb9 || c === 0xb2 || c === 0xb3;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isSlash(c: number): boolean {
  return c === SLASH || c === BACKSLASH;
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const DOT = 0x2e;
const SPACE = 0x20;
const TILDE = 0x7e;
