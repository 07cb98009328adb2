/**
 * The statuses the gateway's runtime can send as a final answer, where
 * nginx sends any up to 999: what `return`, `error_page` and the like are
 * held to.
 *
 * @module
 */

/**
 * Why a status nginx sends (any up to 999) is refused: `Deno.serve` sends
 * a response's status from 200 to 599 only (`Response` throws a
 * `RangeError` for any other).
 */
export const SENDABLE_STATUSES =
  "the gateway's runtime sends a status from 200 to 599 only";

/**
 * Whether the runtime can send a status as the final answer's.
 *
 * @param code The status.
 * @returns `true` from 200 to 599.
 *
 * @example Usage
 * ```ts
 * import { sendable } from "./sendable_status.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(sendable(599), true);
 * strictEqual(sendable(999), false);
 * ```
 */
export function sendable(code: number): boolean {
  return code >= 200 && code <= 599;
}
