/**
 * The request target as the upstream client writes it: the target is built
 * from byte strings (`$uri` holds one char per byte, as nginx's bytes) but
 * the request line is written as UTF-8 text (`request_head.ts`), which is
 * how `Deno.serve` hands the client's target over.
 *
 * @module
 */

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A target built from byte strings, as text whose UTF-8 encoding is those
 * bytes. A target already holding chars past 0xff is text and goes as it
 * is. Bytes that are not UTF-8, controls and spaces are escaped: the line
 * must stay one request line.
 *
 * @param target The path and query.
 * @returns The text to write.
 *
 * @example Usage
 * ```ts
 * import { requestTargetText } from "./target_text.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(requestTargetText("/\xe4\xb8\xad"), "/\u4e2d");
 * strictEqual(requestTargetText("/\xff a"), "/%FF%20a");
 * ```
 */
export function requestTargetText(target: string): string {
  let plain = true;
  let wide = false;
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) plain = false;
    if (c > 0xff) wide = true;
  }
  if (plain) return target;
  let text = target;
  if (!wide) {
    try {
      text = utf8.decode(Uint8Array.from(target, (ch) => ch.charCodeAt(0)));
    } catch {
      return escapeOutside(target, 0x7f);
    }
  }
  return escapeOutside(text, 0x10ffff);
}

/** Escapes controls, space and DEL, and (for bytes) everything past `top`. */
function escapeOutside(text: string, top: number): string {
  let out = "";
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    out += c <= 0x20 || c === 0x7f || (c > top && c <= 0xff)
      ? `%${c.toString(16).toUpperCase().padStart(2, "0")}`
      : ch;
  }
  return out;
}
