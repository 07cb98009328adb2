/**
 * The `error-page` setting of the flags and the JSON config: nginx's
 * `error_page` lines, written into the built-in configuration.
 *
 * @module
 */

/** Status → page URI below the root (nginx `error_page CODE... URI`). */
export type ErrorPages = ReadonlyMap<number, string>;

/** The stock nginx.conf's `error_page 500 502 503 504 /50x.html;`. */
export const DEFAULT_ERROR_PAGE = "500 502 503 504 /50x.html";

/**
 * Parses `error-page` settings, each as nginx writes the directive: status
 * codes (400–599), then the page's path in the client-app folder; `off`
 * alone clears them. A later line wins for a code given twice.
 *
 * @param lines The settings, e.g. `["500 502 503 504 /50x.html"]`.
 * @returns The pages by status.
 * @throws {TypeError} On any other shape, naming the line.
 *
 * @example Usage
 * ```ts
 * import { parseErrorPages } from "./error_pages.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const pages = parseErrorPages(["500 502 503 504 /50x.html", "404 /404.html"]);
 * strictEqual(pages.get(502), "/50x.html");
 * strictEqual(pages.get(404), "/404.html");
 * strictEqual(parseErrorPages(["off"]).size, 0);
 * ```
 */
export function parseErrorPages(lines: readonly string[]): ErrorPages {
  const pages = new Map<number, string>();
  for (const line of lines) {
    const words = line.trim().split(/\s+/);
    if (words.length === 1 && words[0] === "off") continue;
    const uri = words.pop() ?? "";
    const codes = words.map(Number);
    const pathOk = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/.test(uri) &&
      !uri.startsWith("/api/") && !/\/\.|[. ]$/.test(uri);
    if (
      !pathOk || codes.length === 0 ||
      !codes.every((c) => Number.isInteger(c) && c >= 400 && c <= 599) ||
      !words.every((w) => /^\d{3}$/.test(w))
    ) {
      throw new TypeError(
        `Cannot parse error-page "${line}": expected status codes and a path, e.g. "${DEFAULT_ERROR_PAGE}", or off`,
      );
    }
    for (const code of codes) pages.set(code, uri);
  }
  return pages;
}
