/**
 * Field values the gateway builds from a configuration's variables: a
 * redirect's `Location` (`return`, `error_page`, a folder's slash,
 * `proxy_redirect`) and a rewritten `Set-Cookie`. A variable may hold what
 * a client escaped (`$uri` decodes `%0D%0A`), and nginx copies those bytes
 * into the field, which splits its response (a header of the client's
 * choosing); `Headers` refuses them instead, which would end the request
 * in a 500. Here control bytes are escaped back (`%0D%0A`), so the field
 * names the very URI the client sent and nothing else. A tab is field
 * text (RFC 9110 §5.5) and stays.
 *
 * @module
 */

import { byteStringFromBytes } from "../runtime/mod.ts";

// deno-lint-ignore no-control-regex -- control bytes are what is escaped
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
const HEX = "0123456789ABCDEF";

/**
 * A value with its control bytes (a tab aside) as `%XX`.
 *
 * @param value A field value.
 * @returns The value, unchanged when it holds none.
 *
 * @example Usage
 * ```ts
 * import { escapeControls } from "./field_value.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeControls("/a\r\nSet-Cookie: x\t1"), "/a%0D%0ASet-Cookie: x\t1");
 * ```
 */
export function escapeControls(value: string): string {
  if (!CONTROL.test(value)) return value;
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    out += (c < 0x20 && c !== 0x09) || c === 0x7f
      ? `%${HEX[c >> 4]}${HEX[c & 15]}`
      : value[i];
  }
  return out;
}

/**
 * The `Location` of a redirect the gateway makes itself: a path made
 * absolute with the origin the client reached, as nginx's header filter
 * does (`absolute_redirect on`); control bytes escaped
 * ({@linkcode escapeControls}); text past ASCII as its UTF-8 bytes, as
 * nginx sends `$uri` (a field takes one byte per char).
 *
 * @param target The redirect as the configuration made it.
 * @param origin The origin, e.g. `http://localhost:8081`.
 * @returns The field value.
 *
 * @example Usage
 * ```ts
 * import { redirectLocation } from "./field_value.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(redirectLocation("/a\n", "http://h"), "http://h/a%0A");
 * strictEqual(redirectLocation("http://x/é", "http://h"), "http://x/\xc3\xa9");
 * ```
 */
export function redirectLocation(target: string, origin: string): string {
  const value = escapeControls(
    target.startsWith("/") ? origin + target : target,
  );
  // deno-lint-ignore no-control-regex -- ASCII is what passes as it is
  if (/^[\x00-\x7f]*$/.test(value)) return value;
  return byteStringFromBytes(new TextEncoder().encode(value));
}
