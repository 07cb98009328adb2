/**
 * The password formats of `auth_basic_user_file`, as nginx 1.22 checks them
 * (`ngx_crypt` in `src/core/ngx_crypt.c`): `{PLAIN}`, `{SHA}`, `{SSHA}` and
 * `$apr1$` in nginx's own code on every OS. Anything else goes to the C
 * library's `crypt()`: on Linux that is MD5-crypt `$1$`, bcrypt `$2a$`,
 * `$2b$`, `$2y$`, SHA-crypt `$5$`, `$6$` and others (DES, yescrypt); nginx
 * for Windows has no `crypt()` and compares the text as a plain password
 * (`ngx_libc_crypt` in `src/os/win32/`). The gateway checks `$1$`, bcrypt
 * and SHA-crypt as Linux does, and treats every other text as nginx for
 * Windows does.
 *
 * Passwords and stored values are ByteStrings (one char per byte). Both are
 * C strings to nginx: a NUL ends them.
 *
 * @module
 */

import { createHash, timingSafeEqual } from "node:crypto";
import { byteStringFromBytes, byteStringToBytes } from "../runtime/mod.ts";
import { decodeBase64Nginx } from "./basic_credentials.ts";
import { bcryptCheck } from "./bcrypt.ts";
import { md5 } from "./md5.ts";
import { shaCryptHash } from "./sha_crypt.ts";

/** How a stored value is checked. */
export type PasswordScheme =
  | "plain" // {PLAIN}
  | "sha" // {SHA}
  | "ssha" // {SSHA}
  | "apr1" // $apr1$
  | "md5" // $1$
  | "bcrypt" // $2a$, $2b$, $2y$
  | "sha-crypt" // $5$, $6$
  | "text"; // anything else: nginx for Windows compares it as plain text

/**
 * The scheme of a stored value.
 *
 * @param stored The value after `user:`.
 * @returns The scheme.
 *
 * @example Usage
 * ```ts
 * import { passwordScheme } from "./crypt.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(passwordScheme("$apr1$abc$xyz"), "apr1");
 * strictEqual(passwordScheme("secret"), "text");
 * ```
 */
export function passwordScheme(stored: string): PasswordScheme {
  if (stored.startsWith("$apr1$")) return "apr1";
  if (stored.startsWith("{PLAIN}")) return "plain";
  if (stored.startsWith("{SSHA}")) return "ssha";
  if (stored.startsWith("{SHA}")) return "sha";
  if (stored.startsWith("$1$")) return "md5";
  if (/^\$2[aby]\$/.test(stored)) return "bcrypt";
  if (/^\$[56]\$/.test(stored)) return "sha-crypt";
  return "text";
}

/** `./0-9A-Za-z`, the alphabet of crypt outputs (`ngx_crypt_to64`). */
const ITOA64 =
  "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function to64(v: number, n: number): string {
  let out = "";
  for (; n > 0; n--, v >>>= 6) out += ITOA64[v & 0x3f];
  return out;
}

/**
 * Poul-Henning Kamp's MD5-crypt with a magic of `$apr1$` (Apache) or `$1$`
 * (glibc), as `ngx_crypt_apr1`: the salt is at most 8 chars, up to a `$`.
 *
 * @param key The password bytes.
 * @param stored The stored value, read for its magic and salt.
 * @param magic `$apr1$` or `$1$`.
 * @returns The value to compare with `stored`.
 */
export function md5Crypt(
  key: Uint8Array,
  stored: string,
  magic: "$apr1$" | "$1$",
): string {
  const rest = stored.slice(magic.length);
  let saltLen = 0;
  while (saltLen < 8 && saltLen < rest.length && rest[saltLen] !== "$") {
    saltLen++;
  }
  const saltText = rest.slice(0, saltLen);
  const salt = byteStringToBytes(saltText);
  const magicBytes = new TextEncoder().encode(magic);
  let final = md5([key, salt, key]);
  const parts: Uint8Array[] = [key, magicBytes, salt];
  for (let n = key.length; n > 0; n -= 16) {
    parts.push(final.subarray(0, Math.min(n, 16)));
  }
  const zero = new Uint8Array(1);
  const first = key.subarray(0, 1);
  for (let i = key.length; i > 0; i >>= 1) parts.push(i & 1 ? zero : first);
  final = md5(parts);
  for (let i = 0; i < 1000; i++) {
    const round: Uint8Array[] = [i & 1 ? key : final];
    if (i % 3) round.push(salt);
    if (i % 7) round.push(key);
    round.push(i & 1 ? final : key);
    final = md5(round);
  }
  const f = final;
  return magic + saltText + "$" +
    to64((f[0]! << 16) | (f[6]! << 8) | f[12]!, 4) +
    to64((f[1]! << 16) | (f[7]! << 8) | f[13]!, 4) +
    to64((f[2]! << 16) | (f[8]! << 8) | f[14]!, 4) +
    to64((f[3]! << 16) | (f[9]! << 8) | f[15]!, 4) +
    to64((f[4]! << 16) | (f[10]! << 8) | f[5]!, 4) +
    to64(f[11]!, 2);
}

function sha1(parts: readonly Uint8Array[]): Uint8Array {
  const hash = createHash("sha1");
  for (const p of parts) hash.update(p);
  return new Uint8Array(hash.digest());
}

function base64(bytes: Uint8Array): string {
  return btoa(byteStringFromBytes(bytes));
}

/** `{SSHA}`: base64(SHA1(key salt) salt), the salt after 20 decoded bytes. */
function sshaCrypt(key: Uint8Array, stored: string): string {
  const text = decodeBase64Nginx(stored.slice(6));
  const decoded = byteStringToBytes(text ?? "");
  // ngx_crypt_ssha: shorter or undecodable values count as 20 bytes, no salt.
  const salt = decoded.length < 20 ? new Uint8Array(0) : decoded.subarray(20);
  const digest = sha1([key, salt]);
  const out = new Uint8Array(20 + salt.length);
  out.set(digest);
  out.set(salt, 20);
  return "{SSHA}" + base64(out);
}

/** The C-string view nginx has of a value: up to the first NUL. */
function cString(value: string): string {
  const nul = value.indexOf("\0");
  return nul < 0 ? value : value.slice(0, nul);
}

function same(a: string, b: string): boolean {
  const x = byteStringToBytes(a);
  const y = byteStringToBytes(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks a password against a stored value. A generator so that the slow
 * scheme (bcrypt) can be run in slices by {@linkcode PasswordChecker}; the
 * others finish without yielding.
 *
 * @param storedValue The value after `user:` (a ByteString).
 * @param passwordValue The password sent (a ByteString).
 * @returns Whether they match.
 *
 * @example Usage
 * ```ts
 * import { checkPassword } from "./crypt.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const run = (s: string, p: string) => {
 *   const steps = checkPassword(s, p);
 *   for (;;) { const r = steps.next(); if (r.done) return r.value; }
 * };
 * strictEqual(run("{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "password"), true);
 * ```
 */
export function* checkPassword(
  storedValue: string,
  passwordValue: string,
): Generator<void, boolean> {
  const stored = cString(storedValue);
  const password = cString(passwordValue);
  const key = byteStringToBytes(password);
  switch (passwordScheme(stored)) {
    case "apr1":
      return same(md5Crypt(key, stored, "$apr1$"), stored);
    case "md5":
      return same(md5Crypt(key, stored, "$1$"), stored);
    case "plain":
      return same("{PLAIN}" + password, stored);
    case "ssha":
      return same(sshaCrypt(key, stored), stored);
    case "sha":
      return same("{SHA}" + base64(sha1([key])), stored);
    case "bcrypt":
      return yield* bcryptCheck(key, stored);
    case "sha-crypt":
      return (yield* shaCryptHash(key, stored)) === stored;
    case "text":
      return same(password, stored);
  }
}
