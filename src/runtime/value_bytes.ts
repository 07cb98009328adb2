/**
 * The one conversion between the text the engine's variables hold and the
 * bytes nginx works on. nginx's values are bytes: `$uri` decoded from
 * `%C3%A9` is C3 A9, a field's value is what the client sent. The engine
 * holds every value as text (`$uri` as `é`; a field's bytes read as UTF-8
 * by {@linkcode fieldText}), so values from both sources compare and join
 * as nginx's do. A byte that is not part of UTF-8 is held as the lone
 * surrogate U+DC80-U+DCFF (Python's `surrogateescape`, PEP 383): no UTF-8
 * text decodes to one, so {@linkcode fieldBytes} and {@linkcode textBytes}
 * give that byte back, and a value says on the wire what nginx's says.
 *
 * `Headers` takes a value as a ByteString (one char per byte, latin1): a
 * text value must become its bytes first, else `é` (U+00E9) goes as the one
 * byte E9, where nginx sends C3 A9.
 *
 * @module
 */

import { byteStringFromBytes } from "./byte_string.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();
// deno-lint-ignore no-control-regex -- ASCII is what passes as it is
const ASCII = /^[\x00-\x7f]*$/;
const ESCAPED = /[\udc80-\udcff]/;
const BEYOND_BYTES = /[\u0100-\uffff]/;

/**
 * A field's value (a ByteString, one char per byte) as the text variables
 * hold: its bytes read as UTF-8, each byte that is not part of UTF-8 as
 * U+DC80-U+DCFF.
 *
 * @param value The field's value as `Headers` gives it.
 * @returns The text; ASCII, and text that is no ByteString, as it is.
 *
 * @example Usage
 * ```ts
 * import { fieldText } from "./value_bytes.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(fieldText("caf\xc3\xa9"), "café");
 * strictEqual(fieldText("caf\xe9"), "caf\udce9");
 * ```
 */
export function fieldText(value: string): string {
  // Text already (a char past 0xff is no byte): as it is.
  if (ASCII.test(value) || BEYOND_BYTES.test(value)) return value;
  const bytes = Uint8Array.from(value, (c) => c.charCodeAt(0) & 0xff);
  try {
    return utf8.decode(bytes);
  } catch {
    return escapedText(bytes);
  }
}

/** Bytes that are not all UTF-8, each sequence that is decoded. */
function escapedText(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const length = b < 0x80
      ? 1
      : b >= 0xc2 && b <= 0xdf
      ? 2
      : b >= 0xe0 && b <= 0xef
      ? 3
      : b >= 0xf0 && b <= 0xf4
      ? 4
      : 0;
    if (length === 1) {
      out += String.fromCharCode(b);
      i++;
      continue;
    }
    if (length > 0 && i + length <= bytes.length) {
      try {
        out += utf8.decode(bytes.subarray(i, i + length));
        i += length;
        continue;
      } catch {
        // Not a sequence: its first byte is escaped below.
      }
    }
    out += String.fromCharCode(0xdc00 | b);
    i++;
  }
  return out;
}

/**
 * The bytes nginx holds for a value: its UTF-8, each U+DC80-U+DCFF as the
 * byte it stands for.
 *
 * @param text A value as variables hold it.
 * @returns The bytes.
 *
 * @example Usage
 * ```ts
 * import { textBytes } from "./value_bytes.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual([...textBytes("é\udcff")], [0xc3, 0xa9, 0xff]);
 * ```
 */
export function textBytes(text: string): Uint8Array<ArrayBuffer> {
  if (!ESCAPED.test(text)) return encoder.encode(text);
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (c >= 0xdc80 && c <= 0xdcff) {
      out.push(c & 0xff);
    } else if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out.push(...encoder.encode(text.slice(i, i + 2)));
      i++;
    } else {
      out.push(...encoder.encode(text[i]!));
    }
  }
  return Uint8Array.from(out);
}

/**
 * A value as a field carries it: its bytes ({@linkcode textBytes}) as the
 * ByteString `Headers` takes. The one way a variable's value becomes a
 * header value, in a response or upstream.
 *
 * @param text A value as variables hold it.
 * @returns One char per byte; ASCII as it is.
 *
 * @example Usage
 * ```ts
 * import { fieldBytes } from "./value_bytes.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(fieldBytes("/café"), "/caf\xc3\xa9");
 * strictEqual(fieldBytes("/\u4e2d"), "/\xe4\xb8\xad");
 * strictEqual(fieldBytes("/\udcff"), "/\xff");
 * ```
 */
export function fieldBytes(text: string): string {
  if (ASCII.test(text)) return text;
  return byteStringFromBytes(textBytes(text));
}

// deno-lint-ignore no-control-regex -- control bytes are what is escaped
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
const HEX = "0123456789ABCDEF";

/**
 * A field value with its control bytes (a tab aside) as `%XX`. A variable
 * may hold what a client escaped (`$uri` decodes `%0D%0A`), and nginx
 * copies those bytes into the field, which splits its response (a header
 * of the client's choosing); Deno's response writer ends the process on
 * any of them (a panic in `http_h1/write.rs`, "invalid response header
 * value"). Escaped back, the field names the very URI the client sent and
 * nothing else. A tab is field text (RFC 9110 §5.5) and stays.
 *
 * @param value A field value.
 * @returns The value, unchanged when it holds none.
 *
 * @example Usage
 * ```ts
 * import { escapeControls } from "./value_bytes.ts";
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
