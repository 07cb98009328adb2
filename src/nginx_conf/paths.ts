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
 */
export function prefixed(prefix: string, value: string): string {
  const windows = /^[A-Za-z]:[\\/]/.test(prefix);
  const absolute = value.startsWith("/") ||
    (windows && (/^[A-Za-z]:[\\/]/.test(value) || value.startsWith("\\")));
  if (absolute) return value;
  const sep = windows ? "\\" : "/";
  return `${prefix}${sep}${windows ? value.replaceAll("/", "\\") : value}`;
}
