/**
 * Field values the gateway builds from a configuration's variables: a
 * redirect's `Location` (`return`, `error_page`, a folder's slash,
 * `proxy_redirect`), a rewritten `Set-Cookie`, `add_header`. Their bytes
 * are nginx's (`fieldBytes`, runtime/value_bytes.ts), their control bytes
 * escaped (`escapeControls`, beside it).
 *
 * @module
 */

import { escapeControls, fieldBytes } from "../runtime/mod.ts";

export { escapeControls };

/**
 * The `Location` of a redirect the gateway makes itself: a path made
 * absolute with the origin the client reached, as nginx's header filter
 * does (`absolute_redirect on`); control bytes escaped
 * ({@linkcode escapeControls}); the value's bytes as nginx sends them
 * (`fieldBytes`: `$uri`'s `é` as C3 A9).
 *
 * @param target The redirect as the configuration made it (text, as
 * variables hold it).
 * @param origin The origin, e.g. `http://localhost:8081` (a field's bytes).
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
  const value = fieldBytes(escapeControls(target));
  return target.startsWith("/") ? origin + value : value;
}
