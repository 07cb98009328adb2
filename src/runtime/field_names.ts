/**
 * Which request fields nginx keeps, by their names
 * (`ngx_http_parse_header_line`): a name of letters, digits and `-` is
 * valid, `_` only under `underscores_in_headers on`, and any other
 * character (`.`, `!`, `$`, … which HTTP's token allows and `Deno.serve`
 * accepts) makes the line invalid; `ignore_invalid_headers on`, the
 * default, drops an invalid line with an info line. nginx reads both for
 * each line from the server current when it is read: the socket's default
 * server's until the request's name chooses another
 * (ngx_http_process_request_headers).
 *
 * @module
 */

/** `underscores_in_headers` and `ignore_invalid_headers`, as one server sets them. */
export interface FieldNames {
  /** `underscores_in_headers on`: `_` is valid in a name. */
  readonly underscores: boolean;
  /** `ignore_invalid_headers on`: a field with an invalid name is dropped. */
  readonly ignoreInvalid: boolean;
}

/** nginx's defaults: `underscores_in_headers off; ignore_invalid_headers on;`. */
export const NGINX_FIELD_NAMES: FieldNames = Object.freeze({
  underscores: false,
  ignoreInvalid: true,
});

/**
 * Whether nginx drops a request field by its name.
 *
 * @param name The field's name (`Deno.serve` hands names over in lower
 * case; upper-case letters count as letters).
 * @param names The socket's settings; nginx's defaults when absent.
 * @returns `true` when the field is neither passed upstream nor read by
 * `$http_NAME`.
 *
 * @example Usage
 * ```ts
 * import { ignoredField } from "./field_names.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(ignoredField("x-token"), false);
 * strictEqual(ignoredField("x_token"), true);
 * strictEqual(ignoredField("x_token", { underscores: true, ignoreInvalid: true }), false);
 * strictEqual(ignoredField("x.dot", { underscores: true, ignoreInvalid: true }), true);
 * ```
 */
export function ignoredField(
  name: string,
  names: FieldNames = NGINX_FIELD_NAMES,
): boolean {
  if (!names.ignoreInvalid) return false;
  // Char codes, not a regex: it runs for every field of every request.
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (
      (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d ||
      (c >= 0x41 && c <= 0x5a) || (c === 0x5f && names.underscores)
    ) continue;
    return true;
  }
  return false;
}

/**
 * Whether a field with `_` in its name can be kept (so `$http_a_b` may read
 * a field named `a_b` as well as `a-b`).
 *
 * @param names The socket's settings; nginx's defaults when absent.
 * @returns `underscores_in_headers on` or `ignore_invalid_headers off`.
 */
export function keepsUnderscores(
  names: FieldNames = NGINX_FIELD_NAMES,
): boolean {
  return names.underscores || !names.ignoreInvalid;
}

/**
 * `$http_NAME` as nginx reads it (ngx_http_variable_unknown_header) when
 * fields with `_` are kept: the first kept field whose name, lower case
 * with `-` read as `_`, is `NAME`. Callers look the name up with `-` first
 * (`x-token` for `x_token`), which is all there is to it when
 * {@linkcode keepsUnderscores} is `false`.
 *
 * @param fields The fields, as `Headers` or flat (name, value, …), each
 * name as `Deno.serve` hands it over (lower case).
 * @param suffix The variable's name after `http_`, lower case.
 * @param names The socket's settings; nginx's defaults when absent.
 * @returns The value, `null` when no kept field has the name.
 *
 * @example Usage
 * ```ts
 * import { underscoredField } from "./field_names.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const fields = new Headers({ "x_token": "t" });
 * strictEqual(underscoredField(fields, "x_token"), null);
 * strictEqual(underscoredField(fields, "x_token", { underscores: true, ignoreInvalid: true }), "t");
 * ```
 */
export function underscoredField(
  fields: Headers | readonly string[],
  suffix: string,
  names: FieldNames = NGINX_FIELD_NAMES,
): string | null {
  const matches = (name: string) =>
    name.length === suffix.length && name.replaceAll("-", "_") === suffix &&
    !ignoredField(name, names);
  if (fields instanceof Headers) {
    for (const [name, value] of fields) if (matches(name)) return value;
    return null;
  }
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (matches(fields[i]!)) return fields[i + 1]!;
  }
  return null;
}
