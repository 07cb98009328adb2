/**
 * A request's fields line by line, where `Headers` shows them joined.
 *
 * nginx 1.22 reads a field sent on several lines by its first line
 * (`ngx_http_process_header_line` keeps the first, and
 * `ngx_http_variable_unknown_header` returns the first match): `Range`,
 * `Referer`, `User-Agent`, `$http_NAME`. It joins only `Cookie` (`"; "`)
 * and `X-Forwarded-For` (`", "`), and refuses a second line of the fields
 * it takes once (`routing/duplicate_fields.ts`). `Headers` joins every
 * repeated field with `", "`, and its walk (`forEach`) leaves no `", "`
 * after an empty line. The lines as received are in the list `Headers`
 * keeps under its own symbol (Deno's `ext/fetch/20_headers.js`), filled by
 * the first walk.
 *
 * The head's check walks every request's fields anyway, and a name came on
 * more than one line exactly when the lines outnumber the fields walked:
 * only then are the first lines picked ({@linkcode keepFirstLines}), so a
 * request without a repeated name pays one length comparison there, and a
 * reader ({@linkcode firstLine}) a look for `", "` in the value it read
 * and, when found, one property read.
 *
 * @module
 */

/**
 * The key of the lines a `Headers` keeps as received, found once by its
 * description; `undefined` if a Deno release renames it (then every field
 * reads joined, no repeat is refused, and the table tests of the repeated
 * fields fail).
 */
const LINES: symbol | undefined = Object.getOwnPropertySymbols(new Headers())
  .find((s) => s.description === "header list");

/**
 * The fields nginx 1.22 reads on every line, joined
 * (`ngx_http_process_multi_header_lines` in `ngx_http_headers_in`).
 */
const EVERY_LINE: ReadonlySet<string> = new Set(["cookie", "x-forwarded-for"]);

/**
 * Where a request's fields keep the first line of each name sent on
 * several lines: a property of their own, so they go with the request,
 * and a reader's look finds nothing on the others' at the cost of a
 * property read.
 */
const FIRST_LINES: unique symbol = Symbol("first lines");

/** Fields that may hold their first lines. */
type WithFirstLines = { [FIRST_LINES]?: ReadonlyMap<string, string> };

/**
 * The lines of a `Headers` as received, `[name, value]` each, once a walk
 * filled them; `null` before (or if a Deno release stores them otherwise).
 *
 * @param headers The fields.
 * @returns The lines, or `null`.
 *
 * @example Usage
 * ```ts
 * import { fieldLines } from "./field_lines.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(fieldLines(new Headers([["A", "1"], ["B", "2"], ["A", "3"]])), [["A", "1"], ["B", "2"], ["A", "3"]]);
 * ```
 */
export function fieldLines(headers: Headers): readonly unknown[] | null {
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
 * import { hasRepeatedLines } from "./field_lines.ts";
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
  const lines = fieldLines(headers);
  return lines !== null && lines.length * 2 !== walked;
}

/**
 * Picks and keeps the first line of each name sent on several lines (but
 * `Cookie` and `X-Forwarded-For`), for {@linkcode firstLine}: called once
 * per request whose lines show a repeat.
 *
 * @param headers A request's fields, already walked.
 * @returns The first lines by lower-case name.
 *
 * @example Usage
 * ```ts
 * import { keepFirstLines } from "./field_lines.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const firsts = keepFirstLines(new Headers([["Range", "bytes=0-1"], ["range", "bytes=2-3"], ["A", "1"]]));
 * deepStrictEqual([...firsts], [["range", "bytes=0-1"]]);
 * ```
 */
export function keepFirstLines(
  headers: Headers,
): ReadonlyMap<string, string> {
  const seen = new Map<string, string>();
  const firsts = new Map<string, string>();
  for (const line of fieldLines(headers) ?? []) {
    if (!Array.isArray(line) || line.length !== 2) continue;
    const name = String(line[0]).toLowerCase();
    const first = seen.get(name);
    if (first === undefined) seen.set(name, String(line[1]));
    else if (!EVERY_LINE.has(name)) firsts.set(name, first);
  }
  (headers as WithFirstLines)[FIRST_LINES] = firsts;
  return firsts;
}

/**
 * A field's value as nginx 1.22 reads it: its first line when it came on
 * several ({@linkcode keepFirstLines} picked them), else the value read.
 *
 * @param headers The request's fields (or a copy made by
 * {@linkcode copyFields}): where {@linkcode keepFirstLines} kept them.
 * @param name The field's name in lower case.
 * @param value Its value as read (`Headers.get`, or the walk's), or `null`.
 * @returns The first line, or `value`.
 *
 * @example Usage
 * ```ts
 * import { firstLine, keepFirstLines } from "./field_lines.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers([["Referer", "a"], ["Referer", "b"]]);
 * keepFirstLines(headers);
 * strictEqual(firstLine(headers, "referer", headers.get("referer")), "a");
 * strictEqual(firstLine(new Headers({ referer: "a, b" }), "referer", "a, b"), "a, b");
 * ```
 */
export function firstLine(
  headers: object,
  name: string,
  value: string | null,
): string | null {
  // Two lines read joined hold ", " (the walk drops it only after an empty
  // first line, which keepFirstLines' caller writes back joined).
  if (value === null || !value.includes(", ")) return value;
  return (headers as WithFirstLines)[FIRST_LINES]?.get(name) ?? value;
}

/**
 * A copy of a request's fields that reads first lines as the request's do
 * (a `new Headers(headers)` copy keeps only the walk's joined values).
 *
 * @param headers The request's fields.
 * @returns The copy.
 *
 * @example Usage
 * ```ts
 * import { copyFields, firstLine, keepFirstLines } from "./field_lines.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers([["X-A", "1"], ["X-A", "2"]]);
 * keepFirstLines(headers);
 * const copy = copyFields(headers);
 * strictEqual(firstLine(copy, "x-a", copy.get("x-a")), "1");
 * ```
 */
export function copyFields(headers: Headers): Headers {
  const firsts = (headers as WithFirstLines)[FIRST_LINES];
  const lines = fieldLines(headers);
  if (firsts === undefined || lines === null) return new Headers(headers);
  // Copied line by line: a copy of the walk would drop the ", " after an
  // empty line, which firstLine looks for.
  const copy = new Headers(lines as [string, string][]);
  (copy as WithFirstLines)[FIRST_LINES] = firsts;
  return copy;
}

/**
 * Gives a copy of a request's fields the first lines the request's own
 * kept ({@linkcode keepFirstLines}): a `new Headers(headers)` or a
 * `new Request(url, { headers })` copies the joined values only.
 *
 * @param from The request's fields.
 * @param to The copy.
 *
 * @example Usage
 * ```ts
 * import { carryFirstLines, firstLine, keepFirstLines } from "./field_lines.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers([["Range", "bytes=0-1"], ["Range", "bytes=2-3"]]);
 * keepFirstLines(headers);
 * const copy = new Headers(headers);
 * carryFirstLines(headers, copy);
 * strictEqual(firstLine(copy, "range", copy.get("range")), "bytes=0-1");
 * ```
 */
export function carryFirstLines(from: Headers, to: Headers): void {
  const firsts = (from as WithFirstLines)[FIRST_LINES];
  if (firsts !== undefined) (to as WithFirstLines)[FIRST_LINES] = firsts;
}

/**
 * The methods the Fetch standard forbids in `new Request` (a TypeError,
 * `Method is forbidden`), byte-case-insensitively: a client's request
 * with one reaches the handler (Deno.serve makes it without the check),
 * and nginx 1.22 serves `TRACK` as any other method.
 */
const FORBIDDEN_METHOD = /^(?:CONNECT|TRACE|TRACK)$/i;

/**
 * A request the gateway makes from the client's (an error page's, an
 * `X-Accel-Redirect`'s, an SSI include's): its fields read a repeated
 * field by its first line as the client's do ({@linkcode carryFirstLines}).
 * It keeps the client's method even where `new Request` would refuse it
 * ({@linkcode FORBIDDEN_METHOD}): made as a GET, its `method` then reads
 * the client's (nothing hands it to `fetch`, which would send a GET).
 *
 * @param url The request's URL.
 * @param init Its method, the client's fields and a signal.
 * @returns The request.
 *
 * @example Usage
 * ```ts
 * import { derivedRequest, firstLine, keepFirstLines } from "./field_lines.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers([["Range", "bytes=0-1"], ["Range", "bytes=2-3"]]);
 * keepFirstLines(headers);
 * const page = derivedRequest("http://h/page", { method: "GET", headers });
 * strictEqual(firstLine(page.headers, "range", page.headers.get("range")), "bytes=0-1");
 * strictEqual(derivedRequest("http://h/", { method: "TRACK", headers }).method, "TRACK");
 * ```
 */
export function derivedRequest(
  url: string,
  init: { method?: string; headers: Headers; signal?: AbortSignal },
): Request {
  const method = init.method;
  if (method === undefined || !FORBIDDEN_METHOD.test(method)) {
    const req = new Request(url, init);
    carryFirstLines(init.headers, req.headers);
    return req;
  }
  const req = new Request(url, { ...init, method: "GET" });
  Object.defineProperty(req, "method", { value: method, enumerable: true });
  carryFirstLines(init.headers, req.headers);
  return req;
}
