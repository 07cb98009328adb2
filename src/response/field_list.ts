/**
 * A response's header fields as the list a `Response` is made from, with
 * the part of `Headers` the headers filter uses (`get`, `set`, `delete`,
 * `append`), same semantics. The static handler filters its fields before
 * it makes the `Response`: `Deno.serve` prepares the answer's head when a
 * `Response` with a body in memory is made, and reading `response.headers`
 * afterwards throws that away and sends the head the slow way (about a
 * tenth of a cached page's CPU, measured).
 *
 * @module
 */

/** The part of `Headers` the headers filter changes fields through. */
export type HeaderFields = Pick<Headers, "get" | "set" | "delete" | "append">;

/** A field name: an HTTP token (RFC 9110 §5.1). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What `Headers` trims from a value (fetch's HTTP whitespace). */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
/** What no value may hold, as `Headers` refuses it. */
// deno-lint-ignore no-control-regex
const REFUSED_VALUE = /[\0\r\n]|[^\x00-\xff]/;

/**
 * Fields in a `[name, value]` list, changed as `Headers` changes its own:
 * names without regard to case, `set` in place of the first and without
 * the others, `append` at the end; a name that is no token or a value
 * `Headers` would refuse throws the same `TypeError`.
 *
 * @example Usage
 * ```ts
 * import { FieldList } from "./field_list.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const list: [string, string][] = [["ETag", '"a"'], ["x", "1"], ["etag", '"b"']];
 * const fields = new FieldList(list);
 * fields.set("etag", '"c"');
 * fields.append("Cache-Control", "no-cache");
 * deepStrictEqual(list, [["ETag", '"c"'], ["x", "1"], ["Cache-Control", "no-cache"]]);
 * ```
 */
export class FieldList implements HeaderFields {
  readonly #list: [string, string][];

  /** @param list The fields; changed in place. */
  constructor(list: [string, string][]) {
    this.#list = list;
  }

  /**
   * The value of a field, repeated ones joined with `, `.
   *
   * @param name The field's name.
   * @returns Its value, or `null`.
   */
  get(name: string): string | null {
    const lower = checkedName(name).toLowerCase();
    let value: string | null = null;
    for (const [n, v] of this.#list) {
      if (n.toLowerCase() !== lower) continue;
      value = value === null ? v : `${value}, ${v}`;
    }
    return value;
  }

  /**
   * Replaces the first field of that name and removes the others, or adds
   * the field.
   *
   * @param name The field's name.
   * @param value The value.
   */
  set(name: string, value: string): void {
    const v = checkedValue(value);
    const lower = checkedName(name).toLowerCase();
    const list = this.#list;
    let at = -1;
    for (let i = 0; i < list.length;) {
      if (list[i]![0].toLowerCase() !== lower) {
        i++;
      } else if (at < 0) {
        at = i;
        list[i] = [list[i]![0], v];
        i++;
      } else {
        list.splice(i, 1);
      }
    }
    if (at < 0) list.push([name, v]);
  }

  /**
   * Removes every field of that name.
   *
   * @param name The field's name.
   */
  delete(name: string): void {
    const lower = checkedName(name).toLowerCase();
    const list = this.#list;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i]![0].toLowerCase() === lower) list.splice(i, 1);
    }
  }

  /**
   * Adds a field at the end, under the case of a field of that name
   * already there (as `Headers`).
   *
   * @param name The field's name.
   * @param value The value.
   */
  append(name: string, value: string): void {
    const v = checkedValue(value);
    const lower = checkedName(name).toLowerCase();
    const list = this.#list;
    let as = name;
    for (let i = 0; i < list.length; i++) {
      const n = list[i]![0];
      if (n.length === lower.length && n.toLowerCase() === lower) {
        as = n;
        break;
      }
    }
    list.push([as, v]);
  }
}

/** Names already proved tokens: a configuration has a handful. */
const TOKENS = new Set<string>();

function checkedName(name: string): string {
  if (TOKENS.has(name)) return name;
  if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: "${name}"`);
  if (TOKENS.size < 256) TOKENS.add(name);
  return name;
}

/** HTTP whitespace, as `Headers` trims it: tab, LF, CR, space. */
function isEdgeSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function checkedValue(value: string): string {
  // Trimmed only when it has something to trim: a copy per field was
  // garbage per answer.
  const trimmed = value.length > 0 &&
      (isEdgeSpace(value.charCodeAt(0)) ||
        isEdgeSpace(value.charCodeAt(value.length - 1)))
    ? value.replace(EDGE_WHITESPACE, "")
    : value;
  if (REFUSED_VALUE.test(trimmed)) {
    throw new TypeError(`Invalid header value: "${trimmed}"`);
  }
  return trimmed;
}
