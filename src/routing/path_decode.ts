/**
 * The byte-level steps of nginx's URI normalisation
 * (`ngx_http_parse_complex_uri`) and of the escaping it applies to the path
 * it sends upstream (`ngx_escape_uri`), as pure functions for
 * `path_rewrite.ts`. Paths are handled as byte strings (one char per byte):
 * nginx decodes escapes to bytes, before any UTF-8.
 *
 * @module
 */

const encoder = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: true });
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
 * Escapes a byte string as `ngx_escape_uri(NGX_ESCAPE_URI)` does for the
 * path nginx sends upstream: controls, space, `#`, `%`, `?` and bytes past
 * 0x7e, in upper-case hex.
 *
 * @param segment The bytes, one char each.
 * @returns The escaped text.
 *
 * @example Usage
 * ```ts
 * import { escapeBytes } from "./path_decode.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeBytes("a b?#%\xff~"), "a%20b%3F%23%25%FF~");
 * ```
 */
export function escapeBytes(segment: string): string {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    out += c <= 0x20 || c >= 0x7f || c === 0x23 || c === 0x25 || c === 0x3f
      ? `%${c.toString(16).toUpperCase().padStart(2, "0")}`
      : segment[i];
  }
  return out;
}

/**
 * Decodes a byte string as UTF-8, for a file name; `null` when it is not.
 *
 * @param segment The bytes, one char each.
 * @returns The text, or `null`.
 *
 * @example Usage
 * ```ts
 * import { bytesToUtf8 } from "./path_decode.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(bytesToUtf8("\xe4\xb8\xad"), "中");
 * strictEqual(bytesToUtf8("\xff"), null);
 * ```
 */
export function bytesToUtf8(segment: string): string | null {
  try {
    return utf8.decode(Uint8Array.from(segment, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
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
