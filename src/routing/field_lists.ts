/**
 * Comma-separated list fields (RFC 9110 §5.6.1: `#element`): `Connection`,
 * `Upgrade`, `Sec-WebSocket-Protocol`. Elements are split at commas, the
 * optional whitespace around them is spaces and tabs only (`OWS`), and empty
 * elements are dropped: `a,b`, `a, b` and `a ,, b` are one list. The same
 * whitespace is what `Deno.upgradeWebSocket` skips when it looks for
 * `websocket` and `upgrade` (`buildCaseInsensitiveCommaValueFinder`,
 * `ext/http`), so a request this module calls an upgrade is one Deno
 * upgrades: JavaScript's `trim()` also takes U+00A0, which a field's
 * obs-text byte 0xA0 decodes to, and Deno does not.
 *
 * @module
 */

/**
 * The elements of a list field, in order, without their whitespace.
 *
 * @param value The field's value.
 * @returns Its elements, empty ones dropped.
 *
 * @example Usage
 * ```ts
 * import { listElements } from "./field_lists.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(listElements("chat,superchat"), ["chat", "superchat"]);
 * deepStrictEqual(listElements(" chat ,\t, superchat "), ["chat", "superchat"]);
 * deepStrictEqual(listElements("upgrade\xa0"), ["upgrade\xa0"]);
 * ```
 */
export function listElements(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start <= value.length) {
    let end = value.indexOf(",", start);
    if (end < 0) end = value.length;
    const element = trimOws(value, start, end);
    if (element !== "") out.push(element);
    start = end + 1;
  }
  return out;
}

/**
 * Whether a list field has an element, compared without regard to ASCII
 * case.
 *
 * @param value The field's value, or `null` when absent.
 * @param element The element, in lower case.
 * @returns Whether it is listed.
 *
 * @example Usage
 * ```ts
 * import { listHas } from "./field_lists.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(listHas("keep-alive, Upgrade", "upgrade"), true);
 * strictEqual(listHas("upgraded", "upgrade"), false);
 * strictEqual(listHas(null, "upgrade"), false);
 * ```
 */
export function listHas(value: string | null, element: string): boolean {
  if (value === null) return false;
  let start = 0;
  while (start <= value.length) {
    let end = value.indexOf(",", start);
    if (end < 0) end = value.length;
    // Field values are bytes (Latin-1): no character there lowers to an
    // ASCII letter but the ASCII capitals.
    if (trimOws(value, start, end).toLowerCase() === element) return true;
    start = end + 1;
  }
  return false;
}

/** `value[start, end)` without its leading and trailing spaces and tabs. */
function trimOws(value: string, start: number, end: number): string {
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
