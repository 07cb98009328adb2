/**
 * The request fields nginx 1.22 takes once only: a second line of one of
 * them is its 400 (`ngx_http_process_unique_header_line`, and
 * `ngx_http_process_host` for `Host`, which `Deno.serve` refuses itself).
 *
 * `Headers` joins repeated fields, and a joined value cannot tell two
 * lines from one: `If-None-Match: "a", "b"` is one line holding a list,
 * and its walk leaves no `", "` after an empty line (`If-Match:` then
 * `If-Match: x` walks as `x`), a line of blanks is trimmed to nothing, and
 * a date's own `", "` hides a second date. The lines as received are in
 * the list `Headers` keeps under its own symbol, filled by the walk
 * `readFields` makes anyway: they outnumber the fields walked exactly when
 * a name came twice, so a request without a repeated name pays one length
 * comparison, and only the others have their lines read.
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
 * The lines of a `Headers` as received, once a walk filled them; `null`
 * before (or if a Deno release stores them otherwise).
 */
function linesOf(headers: Headers): readonly unknown[] | null {
  if (LINES === undefined) return null;
  const lines = (headers as unknown as Record<symbol, unknown>)[LINES];
  return Array.isArray(lines) ? lines : null;
}

/**
 * Whether some field name came on more than one line.
 *
 * @param headers A request's fields, already walked (`forEach`).
 * @param walked The length of the walk's flat list (name, value, …).
 * @returns Whether the lines outnumber the fields walked.
 *
 * @example Usage
 * ```ts
 * import { hasRepeatedLines } from "./duplicate_fields.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers([["If-Match", ""], ["If-Match", "x"]]);
 * const flat: string[] = [];
 * headers.forEach((value, name) => flat.push(name, value));
 * strictEqual(hasRepeatedLines(headers, flat.length), true);
 * strictEqual(hasRepeatedLines(new Headers({ a: "1, 2" }), 2), false);
 * ```
 */
export function hasRepeatedLines(headers: Headers, walked: number): boolean {
  const lines = linesOf(headers);
  return lines !== null && lines.length * 2 !== walked;
}

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
  const lines = linesOf(headers);
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
