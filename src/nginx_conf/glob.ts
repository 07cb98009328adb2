/**
 * `include` with wildcards and the OS error texts of its failures, after
 * `ngx_conf_include` and `ngx_open_glob`.
 *
 * @module
 */

import { osErrorOf } from "../runtime/mod.ts";

const WINDOWS = Deno.build.os === "windows";
/** The call nginx names when it cannot open a file. */
export const OPEN_CALL = WINDOWS ? "CreateFile" : "open";
/** The call nginx names when it cannot list a folder. */
export const GLOB_CALL = WINDOWS ? "FindFirstFile" : "glob";

/** ` (code: text)` for an OS error, as nginx ends such a message. */
export function osSuffix(error: unknown): string {
  const os = osErrorOf(error);
  return os === undefined ? ` (${error})` : ` (${os.code}: ${os.text})`;
}

/**
 * A glob's last part as a regular expression (`*`, `?`, `[…]`), as
 * `ngx_open_glob` matches it: glob(3) on Unix, FindFirstFile (letter case
 * ignored) on Windows.
 *
 * @param glob The pattern.
 * @returns The expression.
 *
 * @example Usage
 * ```ts
 * import { globRegExp } from "./glob.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(globRegExp("*.conf").test("site.conf"), true);
 * ```
 */
export function globRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    const close = c === "[" ? glob.indexOf("]", i + 2) : -1;
    if (c === "*") source += "[^/\\\\]*";
    else if (c === "?") source += "[^/\\\\]";
    else if (close > 0) {
      const body = glob.slice(i + 1, close).replace(/^!/, "^").replace(
        /[\\\]]/g,
        "\\$&",
      );
      source += `[${body}]`;
      i = close;
    } else source += c.replace(/[.+^${}()|[\\\]]/g, "\\$&");
  }
  // glob() leaves dot files to patterns that start with a dot.
  const hidden = glob.startsWith(".") ? "" : "(?!\\.)";
  return new RegExp(`^${hidden}${source}$`, WINDOWS ? "i" : "");
}
