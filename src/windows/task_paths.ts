/**
 * The executable of a scheduled task: the console-less build when it is
 * there, as an absolute Windows path whatever way an administrator typed
 * it. Pure.
 *
 * @module
 */

import { win32 } from "node:path";

/**
 * The executable as an absolute Windows path: surrounding quotes dropped
 * (Explorer's "Copy as path" adds them), `/` read as `\`, and a relative
 * path (`station-gateway.exe`, `\StationGateway\x.exe`) resolved against
 * the working directory as Windows resolves it.
 *
 * @param path The executable as given.
 * @param cwd The working directory (a Windows path).
 * @returns The absolute path.
 *
 * @example Usage
 * ```ts
 * import { windowsExecutable } from "./task_paths.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(windowsExecutable("station-gateway.exe", "C:\\StationGateway"), "C:\\StationGateway\\station-gateway.exe");
 * strictEqual(windowsExecutable('"C:/Station Gateway/gw.exe"', "D:\\"), "C:\\Station Gateway\\gw.exe");
 * ```
 */
export function windowsExecutable(path: string, cwd: string): string {
  const unquoted = /^".*"$/.test(path.trim()) ? path.trim().slice(1, -1) : path;
  return win32.resolve(
    cwd.replaceAll("/", "\\"),
    unquoted.replaceAll("/", "\\"),
  );
}

/** Whether a Windows path is on a network share (`\\server\share\…`). */
export function isUncPath(path: string): boolean {
  return /^[\\/]{2}[^\\/?.]/.test(path);
}

/**
 * The executable the task should run: the console-less build
 * (`station-gateway-noconsole.exe`, made by `deno task compile`) when it sits
 * beside the running one, so no console window opens at logon; else this one.
 *
 * @param execPath The running executable.
 * @param exists Tells whether a file exists.
 * @returns The executable to register.
 *
 * @example Usage
 * ```ts
 * import { taskExecutable } from "./task_paths.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(taskExecutable("C:\\S\\station-gateway.exe", () => true), "C:\\S\\station-gateway-noconsole.exe");
 * strictEqual(taskExecutable("C:\\S\\station-gateway.exe", () => false), "C:\\S\\station-gateway.exe");
 * ```
 */
export function taskExecutable(
  execPath: string,
  exists: (path: string) => boolean,
): string {
  if (/-noconsole\.exe$/i.test(execPath)) return execPath;
  const quiet = execPath.replace(/(\.exe)?$/i, "-noconsole.exe");
  return exists(quiet) ? quiet : execPath;
}
