/**
 * ByteStrings: how header bytes live in JavaScript. `Deno.serve` and
 * `Headers` hold a header value as one char per byte (U+0000-U+00FF), so a
 * UTF-8 `é` (C3 A9) arrives as the two chars "Ã©". nginx passes header bytes
 * through untouched and writes them raw into its logs; these conversions keep
 * the bytes exact wherever the gateway turns such a value back into bytes or
 * into log text. (The request target is different: `Deno.serve` decodes it
 * from UTF-8.)
 *
 * @module
 */

const encoder = new TextEncoder();
/** WHATWG's "latin1" is windows-1252; exact except for 0x80-0x9F. */
const windows1252 = new TextDecoder("latin1");
const utf8 = new TextDecoder();
const BEYOND_LATIN1 = /[\u0100-\uffff]/;
const NON_ASCII = /[\u0080-\u00ff]/;

/**
 * Decodes bytes one char per byte.
 *
 * The native "latin1" decoder does most of the work; it is windows-1252,
 * which turns 0x80-0x9F into other code points (0x80 into "€", U+20AC), and
 * those bytes are common in UTF-8 (E2 80 94 is "—"), so input with any of
 * them is redone char by char.
 *
 * @param bytes The bytes.
 * @returns The ByteString.
 *
 * @example Usage
 * ```ts
 * import { byteStringFromBytes } from "./byte_string.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(byteStringFromBytes(new Uint8Array([0xe2, 0x80, 0x94])), "\u00e2\u0080\u0094");
 * ```
 */
export function byteStringFromBytes(bytes: Uint8Array): string {
  const text = windows1252.decode(bytes);
  if (!BEYOND_LATIN1.test(text)) return text;
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}

/**
 * Writes a ByteString one byte per char into `into` from `at`. The caller
 * has made room for `text.length` bytes.
 *
 * @param text The ByteString.
 * @param into Where to write.
 * @param at The first index written.
 *
 * @example Usage
 * ```ts
 * import { writeByteString } from "./byte_string.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const into = new Uint8Array(3);
 * writeByteString("\u00c3\u00a9", into, 1);
 * deepStrictEqual([...into], [0, 0xc3, 0xa9]);
 * ```
 */
export function writeByteString(
  text: string,
  into: Uint8Array,
  at: number,
): void {
  for (let i = 0; i < text.length; i++) into[at + i] = text.charCodeAt(i);
}

/**
 * The bytes a ByteString holds.
 *
 * @param text The ByteString.
 * @returns One byte per char.
 *
 * @example Usage
 * ```ts
 * import { byteStringToBytes } from "./byte_string.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual([...byteStringToBytes("\u00c3\u00a9")], [0xc3, 0xa9]);
 * ```
 */
export function byteStringToBytes(text: string): Uint8Array {
  if (!NON_ASCII.test(text)) return encoder.encode(text);
  const bytes = new Uint8Array(text.length);
  writeByteString(text, bytes, 0);
  return bytes;
}

/**
 * A ByteString's bytes read as UTF-8, for text written out as UTF-8 (the
 * error log): that gives back the bytes received whenever they are UTF-8.
 * Bytes that are not become U+FFFD.
 *
 * @param text The ByteString.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { byteStringToText } from "./byte_string.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(byteStringToText("http://x/\u00c3\u00a9"), "http://x/\u00e9");
 * ```
 */
export function byteStringToText(text: string): string {
  return NON_ASCII.test(text) ? utf8.decode(byteStringToBytes(text)) : text;
}
