/**
 * Windows command lines: quoting an argument so `CommandLineToArgvW` gives
 * it back, and splitting a line the same way (the task's `<Arguments>`).
 *
 * @module
 */

/**
 * Quotes one argument for a Windows command line so that
 * `CommandLineToArgvW` (the C runtime's parser) gives it back unchanged:
 * quotes around anything with spaces, tabs or quotes, backslashes doubled
 * only before a quote.
 *
 * @param arg The argument.
 * @returns The quoted argument.
 *
 * @example Usage
 * ```ts
 * import { quoteWindowsArg } from "./command_line.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(quoteWindowsArg("C:\\Station App\\html"), '"C:\\Station App\\html"');
 * strictEqual(quoteWindowsArg("C:\\dir\\"), "C:\\dir\\");
 * ```
 */
export function quoteWindowsArg(arg: string): string {
  if (arg !== "" && !/[ \t\n\v"]/.test(arg)) return arg;
  let out = '"';
  let slashes = 0;
  for (const ch of arg) {
    if (ch === "\\") {
      slashes++;
      continue;
    }
    if (ch === '"') {
      out += "\\".repeat(slashes * 2 + 1) + '"';
    } else {
      out += "\\".repeat(slashes) + ch;
    }
    slashes = 0;
  }
  return `${out}${"\\".repeat(slashes * 2)}"`;
}

/**
 * Splits a Windows command line as `CommandLineToArgvW` does: the inverse
 * of {@linkcode quoteWindowsArg} (the task's `<Arguments>` read back).
 *
 * @param line The command line.
 * @returns The arguments.
 *
 * @example Usage
 * ```ts
 * import { splitWindowsArgs } from "./command_line.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(splitWindowsArgs('--root "C:\\Station App\\html" -x'), ["--root", "C:\\Station App\\html", "-x"]);
 * ```
 */
export function splitWindowsArgs(line: string): string[] {
  const args: string[] = [];
  let current = "";
  let quoted = false;
  let started = false;
  let slashes = 0;
  for (const ch of line) {
    if (ch === "\\") {
      slashes++;
      started = true;
      continue;
    }
    if (ch === '"') {
      current += "\\".repeat(Math.floor(slashes / 2));
      if (slashes % 2 === 1) current += '"';
      else quoted = !quoted;
      slashes = 0;
      started = true;
      continue;
    }
    current += "\\".repeat(slashes);
    slashes = 0;
    if (!quoted && (ch === " " || ch === "\t")) {
      if (started) args.push(current);
      current = "";
      started = false;
      continue;
    }
    current += ch;
    started = true;
  }
  current += "\\".repeat(slashes);
  if (started) args.push(current);
  return args;
}
