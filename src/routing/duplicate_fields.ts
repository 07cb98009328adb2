/**
 * The request fields nginx 1.22 takes once only: a second line of one of
 * them is its 400 (`ngx_http_process_unique_header_line`, and
 * `ngx_http_process_host` for `Host`, which `Deno.serve` refuses itself).
 *
 * `Headers` joins repeated fields with `", "`, and a joined value cannot
 * tell two lines from one line that holds a list (`If-None-Match: "a",
 * "b"`). The lines as received are in the list `Headers` keeps under its
 * own symbol, filled by the walk {@linkcode readFields} makes anyway; it is
 * read only when a value of one of these fields holds `", "`, so a request
 * without such a value pays nothing.
 *
 * @module
 */

/**
 * The fields of `ngx_http_headers_in` with
 * `ngx_http_process_unique_header_line` in nginx 1.22, in lower case.
 */
export const UNIQUE_FIELDS: ReadonlySet<string> = new Set([
  "content-length",
  "content-range",
  "if-modified-since",
  "if-unmodified-since",
  "if-match",
  "if-none-match",
  "if-range",
  "transfer-encoding",
  "expect",
  "authorization",
]);

/**
 * The key of the lines a `Headers` keeps as received (Deno's
 * `ext/fetch/20_headers.js`), found once by its description; `undefined`
 * if a Deno release renames it (then no line is refused as repeated, and
 * the table test of this class fails).
 */
const LINES: symbol | undefined = Object.getOwnPropertySymbols(new Headers())
  .find((s) => s.description === "header list");

/**
 * nginx's line for the first repeated field it takes once only, in the
 * order the lines came.
 *
 * @param headers A request's fields, already walked (`forEach`), which
 * fills the list of lines for a served request.
 * @returns `client sent duplicate header line: …`, or `null`.
 *
 * @example Usage
 * ```ts
 * import { duplicateFieldLine } from "./duplicate_fields.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers([["If-Match", '"a"'], ["If-Match", '"b"']]);
 * strictEqual(
 *   duplicateFieldLine(headers),
 *   'client sent duplicate header line: "If-Match: "b"", previous value: "If-Match: "a""',
 * );
 * strictEqual(duplicateFieldLine(new Headers([["If-Match", '"a", "b"']])), null);
 * ```
 */
export function duplicateFieldLine(headers: Headers): string | null {
  if (LINES === undefined) return null;
  const lines = (headers as unknown as Record<symbol, unknown>)[LINES];
  if (!Array.isArray(lines)) return null;
  let first: Map<string, string> | null = null;
  for (const line of lines) {
    if (!Array.isArray(line) || line.length !== 2) continue;
    const [name, value] = line as [string, string];
    const lower = name.toLowerCase();
    if (!UNIQUE_FIELDS.has(lower)) continue;
    first ??= new Map();
    const previous = first.get(lower);
    if (previous !== undefined) {
      return `client sent duplicate header line: "${name}: ${value}", previous value: "${previous}"`;
    }
    first.set(lower, `${name}: ${value}`);
  }
  return null;
}
