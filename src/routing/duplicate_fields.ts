/**
 * The request fields nginx 1.22 takes once only: a second line of one of
 * them is its 400 (`ngx_http_process_unique_header_line`, and
 * `ngx_http_process_host` for `Host`, which `Deno.serve` refuses itself).
 *
 * `Headers` joins repeated fields, and a joined value cannot tell two
 * lines from one: `If-None-Match: "a", "b"` is one line holding a list,
 * and its walk leaves no `", "` after an empty line (`If-Match:` then
 * `If-Match: x` walks as `x`), a line of blanks is trimmed to nothing, and
 * a date's own `", "` hides a second date. The lines as received
 * (`runtime/field_lines.ts`) outnumber the fields walked exactly when a
 * name came twice, so a request without a repeated name pays one length
 * comparison, and only the others have their lines read.
 *
 * @module
 */

import { fieldLines } from "../runtime/mod.ts";

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
  const lines = fieldLines(headers);
  if (lines === null) return null;
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
