/**
 * The parameters a FastCGI request carries, in nginx's order
 * (`ngx_http_fastcgi_create_request`): the location's `fastcgi_param`
 * list evaluated (an `if_not_empty` one left out when empty), then, under
 * `fastcgi_pass_request_headers on`, each client field as `HTTP_NAME`
 * (letters upper case, `-` as `_`), except a field whose `HTTP_` name a
 * `fastcgi_param` already sets.
 *
 * @module
 */

import type { RequestVars } from "../engine/mod.ts";
import type { FastcgiConf } from "../engine/mod.ts";
import { ignoredField, textBytes } from "../runtime/mod.ts";

const encoder = new TextEncoder();

/** A ByteString (one char per byte, as `Headers` holds values) as its bytes. */
function latin1Bytes(value: string): Uint8Array {
  const out = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) out[i] = value.charCodeAt(i) & 0xff;
  return out;
}

/**
 * The `HTTP_` parameter name of a client field, as nginx writes it.
 *
 * @param name The field's name.
 * @returns e.g. `HTTP_X_REQUESTED_WITH`.
 *
 * @example Usage
 * ```ts
 * import { httpParamName } from "./params.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(httpParamName("x-requested-with"), "HTTP_X_REQUESTED_WITH");
 * ```
 */
export function httpParamName(name: string): string {
  return `HTTP_${name.toUpperCase().replaceAll("-", "_")}`;
}

/**
 * The key a client field is matched against the `HTTP_` parameters with:
 * lower case, `-` as `_` (nginx's `params->hash`).
 *
 * @param name The field's name.
 * @returns e.g. `x_requested_with`.
 */
export function fieldKey(name: string): string {
  return name.toLowerCase().replaceAll("-", "_");
}

/**
 * Evaluates a location's parameters for one request.
 *
 * @param conf The location's FastCGI settings.
 * @param vars The request's variables.
 * @param client The client's fields (`Headers`).
 * @returns The pairs as bytes, in nginx's order.
 *
 * @example Usage
 * ```ts
 * import { requestParams } from "./params.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const constant = (text: string) => ({ text, constant: text, usesCaptures: false, evaluate: () => text });
 * const conf = {
 *   params: [{ name: "A", value: constant("1"), ifNotEmpty: false }, { name: "B", value: constant(""), ifNotEmpty: true }],
 *   passRequestHeaders: true,
 *   hiddenFields: new Set(["host"]),
 * };
 * const pairs = requestParams(conf as never, {} as never, new Headers({ host: "h", "x-a": "v" }));
 * strictEqual(pairs.map(([n]) => new TextDecoder().decode(n)).join(), "A,HTTP_X_A");
 * ```
 */
export function requestParams(
  conf: Pick<FastcgiConf, "params" | "passRequestHeaders" | "hiddenFields">,
  vars: RequestVars,
  client: Headers,
): [Uint8Array, Uint8Array][] {
  const out: [Uint8Array, Uint8Array][] = [];
  for (const param of conf.params) {
    const value = param.value.constant ?? param.value.evaluate(vars);
    if (param.ifNotEmpty && value === "") continue;
    out.push([encoder.encode(param.name), textBytes(value)]);
  }
  if (!conf.passRequestHeaders) return out;
  const names = vars.fieldNames;
  const hidden = conf.hiddenFields;
  client.forEach((value, name) => {
    if (ignoredField(name, names)) return;
    if (hidden.size > 0 && hidden.has(fieldKey(name))) return;
    out.push([encoder.encode(httpParamName(name)), latin1Bytes(value)]);
  });
  return out;
}
