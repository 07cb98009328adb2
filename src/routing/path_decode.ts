/**
 * The byte-level steps of nginx's URI normalisation
 * (`ngx_http_parse_complex_uri`) and of the escaping it applies to the path
 * it sends upstream (`ngx_escape_uri`), as pure functions for
 * `request_target.ts`. Paths are handled as byte strings (one char per byte):
 * nginx decodes escapes to bytes, before any UTF-8.
 *
 * @module
 */

const encoder = new TextEncoder();
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;

/**
 * Percent-decodes a path to a byte string; `null` on a malformed escape
 * (nginx answers 400). Chars outside ASCII are taken as their UTF-8 bytes,
 * the bytes the client sent.
 *
 * @param path The raw path.
 * @returns The decoded bytes, one char each, or `null`.
 *
 * @example Usage
 * ```ts
 * import { decodeToBytes } from "./path_decode.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(decodeToBytes("/a%2fb%ff"), "/a/b\xff");
 * strictEqual(decodeToBytes("/%zz"), null);
 * ```
 */
export function decodeToBytes(path: string): string | null {
  const bytes = encoder.encode(path);
  let out = "";
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 0x25) {
      out += String.fromCharCode(b);
      continue;
    }
    const hex = String.fromCharCode(bytes[i + 1] ?? 0, bytes[i + 2] ?? 0);
    if (!HEX_PAIR.test(hex)) return null;
    out += String.fromCharCode(parseInt(hex, 16));
    i += 2;
  }
  return out;
}

/**
 * The bytes `ngx_escape_uri(NGX_ESCAPE_URI)` escapes in nginx 1.22 (the
 * `uri` table of `ngx_string.c`): controls, space, `"`, `#`, `%`, `<`, `>`,
 * `?`, `\\`, `^`, `` ` ``, `{`, `|`, `}` and 0x7f-0xff. One bit per byte.
 */
const URI_ESCAPED = new Uint32Array([
  0xffffffff,
  0xd000002d,
  0x50000000,
  0xb8000001,
  0xffffffff,
  0xffffffff,
  0xffffffff,
  0xffffffff,
]);
const HEX = "0123456789ABCDEF";

/**
 * Escapes a byte string as `ngx_escape_uri(NGX_ESCAPE_URI)` does for the
 * path nginx sends upstream, in upper-case hex; `/` and the sub-delimiters
 * stay as they are.
 *
 * @param segment The bytes, one char each (chars past 0xff are not bytes
 * and are never given here).
 * @param escaped Another of nginx's tables, one bit per byte (SSI's
 * `encoding="url"` takes `NGX_ESCAPE_HTML`'s).
 * @returns The escaped text.
 *
 * @example Usage
 * ```ts
 * import { escapeBytes } from "./path_decode.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeBytes("a b?#%\xff~|/"), "a%20b%3F%23%25%FF~%7C/");
 * ```
 */
export function escapeBytes(
  segment: string,
  escaped: ArrayLike<number> = URI_ESCAPED,
): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i) & 0xff;
    if ((escaped[c >> 5]! & (1 << (c & 31))) === 0) continue;
    out += segment.slice(from, i) + "%" + HEX[c >> 4] + HEX[c & 15];
    from = i + 1;
  }
  return from === 0 ? segment : out + segment.slice(from);
}

/**
 * Resolves `.`, `..` and empty segments (`merge_slashes on`); `null` when
 * the path climbs above the root (nginx answers 400).
 *
 * @param pieces The path split at its separators.
 * @param isDot Which spellings are `.`.
 * @param isDotDot Which spellings are `..`.
 * @returns The segments, and whether the path names a folder.
 *
 * @example Usage
 * ```ts
 * import { normalise } from "./path_decode.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const dot = (s: string) => s === ".";
 * const dotDot = (s: string) => s === "..";
 * deepStrictEqual(normalise("/a/../b/".split("/"), dot, dotDot), {
 *   segments: ["b"],
 *   directory: true,
 * });
 * deepStrictEqual(normalise("/..".split("/"), dot, dotDot), null);
 * ```
 */
export function normalise(
  pieces: string[],
  isDot: (s: string) => boolean,
  isDotDot: (s: string) => boolean,
): { segments: string[]; directory: boolean } | null {
  const segments: string[] = [];
  for (const piece of pieces) {
    if (piece === "" || isDot(piece)) continue;
    if (isDotDot(piece)) {
      if (segments.pop() === undefined) return null;
      continue;
    }
    segments.push(piece);
  }
  const last = pieces[pieces.length - 1] ?? "";
  const directory = segments.length === 0 || last === "" || isDot(last) ||
    isDotDot(last);
  return { segments, directory };
}
