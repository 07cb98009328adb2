/**
 * The one reader of `Authorization: Basic` for the whole gateway
 * (`ngx_http_auth_basic_user` in `ngx_http_core_module.c`): `auth_basic`
 * checks these credentials and `$remote_user` prints the user, so both see
 * the same bytes.
 *
 * @module
 */

const BASE64 =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < BASE64.length; i++) VALUE[BASE64.charCodeAt(i)] = i;

/**
 * Decodes base64 as `ngx_decode_base64` does: the text up to the first `=`
 * must be all alphabet characters and not one more than a multiple of four
 * long; what follows `=` is ignored.
 *
 * @param text The encoded text (a ByteString).
 * @returns The decoded bytes as a ByteString, or `null`.
 */
export function decodeBase64Nginx(text: string): string | null {
  let len = 0;
  for (; len < text.length; len++) {
    const c = text.charCodeAt(len);
    if (c === 0x3d) break;
    if (c > 0xff || VALUE[c]! < 0) return null;
  }
  if (len % 4 === 1) return null;
  let out = "";
  let i = 0;
  for (; i + 4 <= len; i += 4) {
    const n = (VALUE[text.charCodeAt(i)]! << 18) |
      (VALUE[text.charCodeAt(i + 1)]! << 12) |
      (VALUE[text.charCodeAt(i + 2)]! << 6) | VALUE[text.charCodeAt(i + 3)]!;
    out += String.fromCharCode(n >> 16, (n >> 8) & 0xff, n & 0xff);
  }
  const rest = len - i;
  if (rest >= 2) {
    const a = VALUE[text.charCodeAt(i)]!;
    const b = VALUE[text.charCodeAt(i + 1)]!;
    out += String.fromCharCode(((a << 2) | (b >> 4)) & 0xff);
    if (rest === 3) {
      const c = VALUE[text.charCodeAt(i + 2)]!;
      out += String.fromCharCode(((b << 4) | (c >> 2)) & 0xff);
    }
  }
  return out;
}

/** A user and password from `Authorization: Basic`, as ByteStrings. */
export interface BasicCredentials {
  /** The user: the bytes before the first `:`, never empty. */
  user: string;
  /** The password: the bytes after it. */
  password: string;
}

/**
 * Reads `Authorization: Basic` as nginx does: `Basic` in any case, one space,
 * more spaces skipped, base64 as nginx decodes it, and a `:` after a
 * non-empty user. Anything else is no credentials (nginx's "no
 * user/password was provided").
 *
 * @param authorization The header value (a ByteString), or `null`.
 * @returns The credentials, or `null`.
 *
 * @example Usage
 * ```ts
 * import { parseBasicCredentials } from "./basic_credentials.ts";
 * import { deepStrictEqual, strictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseBasicCredentials("Basic dTpw"), { user: "u", password: "p" });
 * strictEqual(parseBasicCredentials("Basic OnA="), null); // ":p": no user
 * ```
 */
export function parseBasicCredentials(
  authorization: string | null,
): BasicCredentials | null {
  if (authorization === null || authorization.length < 6) return null;
  if (authorization.slice(0, 6).toLowerCase() !== "basic ") return null;
  let start = 6;
  while (start < authorization.length && authorization[start] === " ") start++;
  if (start === authorization.length) return null;
  const decoded = decodeBase64Nginx(authorization.slice(start));
  if (decoded === null) return null;
  const colon = decoded.indexOf(":");
  if (colon <= 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
