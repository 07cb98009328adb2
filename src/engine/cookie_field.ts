/**
 * The one reading of cookies for the whole gateway: `$cookie_NAME` from
 * the request's `Cookie` field (`ngx_http_parse_multi_header_lines`) and
 * `$upstream_cookie_NAME` from the answer's `Set-Cookie` lines
 * (`ngx_http_parse_set_cookie_lines`), with nginx's separators.
 *
 * nginx reads each `Cookie` line on its own; `Deno.serve` joins repeated
 * lines with `; ` first, which reads the same but for a line ending in a
 * bare name followed by a line setting that name (nginx finds the second).
 *
 * @module
 */

/**
 * A cookie of a `Cookie` field by name, as nginx finds it: pairs are
 * separated by `;` or `,`, spaces after a separator and around `=` are
 * skipped, the name is compared without regard to case, and the value runs
 * to the next `;` (a `,` does not end it) with trailing spaces kept. A name
 * without `=` makes nginx skip its separator too, so the pair after it is
 * not looked at (`ngx_http_parse_multi_header_lines`' `*start++`).
 *
 * @param field The field's value (repeated fields joined, as `Headers`
 * joins them).
 * @param name The cookie's name.
 * @returns The value, `undefined` when no pair has the name.
 *
 * @example Usage
 * ```ts
 * import { cookieValue } from "./cookie_field.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(cookieValue("a=1; B = 2 ,c=3", "b"), "2 ,c=3");
 * strictEqual(cookieValue("a=1,c=3", "c"), "3");
 * strictEqual(cookieValue("a=1", "b"), undefined);
 * ```
 */
export function cookieValue(field: string, name: string): string | undefined {
  const end = field.length;
  const n = name.length;
  if (n > end) return undefined;
  const lower = name.toLowerCase();
  let i = 0;
  while (i < end) {
    if (field.slice(i, i + n).toLowerCase() === lower) {
      i += n;
      while (i < end && field[i] === " ") i++;
      // The separator after a name without `=` is consumed here.
      if (i < end && field[i++] === "=") {
        while (i < end && field[i] === " ") i++;
        const stop = field.indexOf(";", i);
        return field.slice(i, stop < 0 ? end : stop);
      }
    }
    while (i < end) {
      const c = field[i++];
      if (c === ";" || c === ",") break;
    }
    while (i < end && field[i] === " ") i++;
  }
  return undefined;
}

/**
 * A cookie an answer sets, by name: only each `Set-Cookie` line's first
 * pair is looked at (its attributes never are), its name compared without
 * regard to case, spaces around `=` skipped, the value up to the first `;`
 * (`ngx_http_parse_set_cookie_lines`).
 *
 * @param lines The `Set-Cookie` lines, one per field.
 * @param name The cookie's name.
 * @returns The value of the first line that sets it, `undefined` when none.
 *
 * @example Usage
 * ```ts
 * import { setCookieValue } from "./cookie_field.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const lines = ["sid=1; Path=/", "lang = en;Max-Age=9"];
 * strictEqual(setCookieValue(lines, "LANG"), "en");
 * strictEqual(setCookieValue(lines, "path"), undefined);
 * ```
 */
export function setCookieValue(
  lines: readonly string[],
  name: string,
): string | undefined {
  const n = name.length;
  const lower = name.toLowerCase();
  for (const line of lines) {
    if (n >= line.length || line.slice(0, n).toLowerCase() !== lower) continue;
    let i = n;
    while (i < line.length && line[i] === " ") i++;
    if (i === line.length || line[i++] !== "=") continue;
    while (i < line.length && line[i] === " ") i++;
    const stop = line.indexOf(";", i);
    return line.slice(i, stop < 0 ? line.length : stop);
  }
  return undefined;
}
