/**
 * WebSocket close frames (RFC 6455 §5.5.1, §7.4): their payload written and
 * read, and the code a close may carry on.
 *
 * @module
 */

/**
 * The payload of a close frame (RFC 6455 §5.5.1).
 *
 * @param code The close code, or `undefined` for none.
 * @param reason The reason.
 * @returns The payload.
 */
export function closePayload(
  code: number | undefined,
  reason = "",
): Uint8Array {
  if (code === undefined) return new Uint8Array(0);
  const text = new TextEncoder().encode(reason).subarray(0, 123);
  const out = new Uint8Array(2 + text.length);
  out[0] = code >> 8;
  out[1] = code & 0xff;
  out.set(text, 2);
  return out;
}

/**
 * Reads a close frame's payload.
 *
 * @param payload The payload.
 * @returns The code (`undefined` when absent) and reason.
 */
export function parseClosePayload(
  payload: Uint8Array,
): { code: number | undefined; reason: string } {
  if (payload.length < 2) return { code: undefined, reason: "" };
  return {
    code: (payload[0]! << 8) | payload[1]!,
    reason: new TextDecoder().decode(payload.subarray(2)),
  };
}

/**
 * The code a close frame may carry for a close that ended with `code`
 * (RFC 6455 §7.4): a defined code or one from 3000–4999 as it is; none for
 * "no status received" (1005); 1001 "going away" for a connection that
 * ended without a valid code (Deno reports a dropped one as 0 or 1006, and
 * 1006 and 1015 must never be sent, §7.4.1).
 *
 * @param code The code the close ended with, if any.
 * @returns The code to send, or `undefined` for a frame without one.
 *
 * @example Usage
 * ```ts
 * import { sendableCloseCode } from "./websocket_close.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(sendableCloseCode(1000), 1000);
 * strictEqual(sendableCloseCode(0), 1001);
 * strictEqual(sendableCloseCode(1005), undefined);
 * ```
 */
export function sendableCloseCode(
  code: number | undefined,
): number | undefined {
  if (code === undefined || code === 1005) return undefined;
  const defined = code >= 1000 && code <= 1014 && code !== 1004 &&
    code !== 1005 && code !== 1006;
  return defined || (code >= 3000 && code <= 4999) ? code : 1001;
}
