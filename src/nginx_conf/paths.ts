/**
 * What a compiled nginx.conf gives the process (its listener and logs, as
 * the JSON config file's settings), and nginx's prefix rule for paths.
 *
 * @module
 */

import type { SettingsInput } from "../config/mod.ts";

/**
 * The settings an nginx.conf gives: the JSON config file's, error pages
 * included (`error_page` lines as nginx writes them, e.g.
 * `500 502 503 504 /50x.html`, each URI a file under `root`).
 */
export type NginxSettings = SettingsInput;

/**
 * Resolves a path as `ngx_conf_full_name` does against the prefix: an
 * absolute path (`/x`, `C:\x`, `C:/x`, `\x` on Windows) stays.
 *
 * @param prefix The prefix, absolute, without a trailing separator.
 * @param value The path from the file.
 * @returns The absolute path.
 *
 * @example Usage
 * ```ts
 * import { prefixed } from "./paths.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(prefixed("/n", "html"), "/n/html");
 * strictEqual(prefixed("\\\\srv\\c$\\", "\\\\srv\\c$\\app"), "\\\\srv\\c$\\app");
 * ```
 */
export function prefixed(prefix: string, value: string): string {
  // A prefix on a share (`\\server\c$\`: the built-in configuration's is
  // its root's folder) is a Windows one as much as a drive's.
  const windows = /^[A-Za-z]:[\\/]/.test(prefix) || /^\\\\[^\\]/.test(prefix);
  const absolute = value.startsWith("/") ||
    (windows && (/^[A-Za-z]:[\\/]/.test(value) || value.startsWith("\\")));
  if (absolute) return value;
  const sep = windows ? "\\" : "/";
  return `${prefix}${sep}${windows ? value.replaceAll("/", "\\") : value}`;
}
