/**
 * bcrypt (Provos and Mazières, "A Future-Adaptable Password Scheme", 1999)
 * as the C library's `crypt()` checks `$2a$`, `$2b$` and `$2y$` on Linux,
 * where nginx hands such values to it. A generator that yields once per
 * round of the cost loop, so a check of cost 10 (1,024 rounds) can run in
 * slices between other requests.
 *
 * Blowfish's initial P-array and S-boxes are the hexadecimal digits of π;
 * they are computed once, on the first check, rather than listed.
 *
 * @module
 */

const ALPHABET =
  "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

/** The 18 + 1024 words of π that initialise Blowfish, once computed. */
let piWords: Int32Array | null = null;

/** π's fractional hex digits by Machin's formula, in BigInt fixed point. */
function computePiWords(): Int32Array {
  const count = 18 + 1024;
  const bits = BigInt(count * 32 + 64);
  const one = 1n << bits;
  const arctanInverse = (x: bigint): bigint => {
    const x2 = x * x;
    let term = one / x;
    let sum = 0n;
    for (let k = 0n; term !== 0n; k++) {
      sum += (k & 1n ? -term : term) / (2n * k + 1n);
      term /= x2;
    }
    return sum;
  };
  const pi = 16n * arctanInverse(5n) - 4n * arctanInverse(239n);
  // Drop the integer part (3) and the guard bits.
  const fraction = (pi - (3n << bits)) >> 64n;
  const words = new Int32Array(count);
  let f = fraction;
  for (let i = count - 1; i >= 0; i--, f >>= 32n) {
    words[i] = Number(f & 0xffffffffn) | 0;
  }
  return words;
}

class Blowfish {
  readonly p: Int32Array;
  readonly s: Int32Array;
  readonly lr = new Int32Array(2);

  constructor(init: Int32Array) {
    this.p = init.slice(0, 18);
    this.s = init.slice(18);
  }

  encipher(): void {
    const p = this.p;
    const s = this.s;
    let l = this.lr[0]!;
    let r = this.lr[1]!;
    l ^= p[0]!;
    for (let i = 1; i <= 16; i += 2) {
      r ^= (((s[l >>> 24]! + s[256 | ((l >>> 16) & 0xff)]!) ^
        s[512 | ((l >>> 8) & 0xff)]!) + s[768 | (l & 0xff)]!) ^ p[i]!;
      l ^= (((s[r >>> 24]! + s[256 | ((r >>> 16) & 0xff)]!) ^
        s[512 | ((r >>> 8) & 0xff)]!) + s[768 | (r & 0xff)]!) ^ p[i + 1]!;
    }
    this.lr[0] = r ^ p[17]!;
    this.lr[1] = l;
  }

  /** Blowfish's key schedule, with the salt mixed in (`salt` may be empty). */
  expand(key: Uint8Array, salt: Uint8Array): void {
    let k = 0;
    for (let i = 0; i < 18; i++) {
      let word = 0;
      for (let b = 0; b < 4; b++, k = (k + 1) % key.length) {
        word = (word << 8) | key[k]!;
      }
      this.p[i] = this.p[i]! ^ word;
    }
    const lr = this.lr;
    lr[0] = 0;
    lr[1] = 0;
    let j = 0;
    const mix = (): void => {
      if (salt.length === 0) return;
      for (let h = 0; h < 2; h++) {
        let word = 0;
        for (let b = 0; b < 4; b++, j = (j + 1) % salt.length) {
          word = (word << 8) | salt[j]!;
        }
        lr[h] = lr[h]! ^ word;
      }
    };
    for (let i = 0; i < 18; i += 2) {
      mix();
      this.encipher();
      this.p[i] = lr[0]!;
      this.p[i + 1] = lr[1]!;
    }
    for (let i = 0; i < 1024; i += 2) {
      mix();
      this.encipher();
      this.s[i] = lr[0]!;
      this.s[i + 1] = lr[1]!;
    }
  }
}

function decode(text: string, bytes: number): Uint8Array | null {
  const out = new Uint8Array(bytes);
  let acc = 0;
  let accBits = 0;
  let at = 0;
  for (let i = 0; i < text.length && at < bytes; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? INDEX[c]! : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    accBits += 6;
    if (accBits >= 8) {
      accBits -= 8;
      out[at++] = (acc >> accBits) & 0xff;
    }
  }
  return at === bytes ? out : null;
}

function encode(bytes: Uint8Array): string {
  let out = "";
  let acc = 0;
  let accBits = 0;
  for (const b of bytes) {
    acc = ((acc << 8) | b) & 0xffff;
    accBits += 8;
    while (accBits >= 6) {
      accBits -= 6;
      out += ALPHABET[(acc >> accBits) & 0x3f];
    }
  }
  if (accBits > 0) out += ALPHABET[(acc << (6 - accBits)) & 0x3f];
  return out;
}

const MAGIC = /^\$(2[aby])\$(\d\d)\$([./A-Za-z0-9]{22})/;
/** "OrpheanBeholderScryDoubt" as six big-endian words. */
const ORPHEAN = [...new TextEncoder().encode("OrpheanBeholderScryDoubt")];

/**
 * Computes the bcrypt value of `key` with the version, cost and salt of
 * `stored`, one round of the cost loop per `yield`.
 *
 * @param key The password bytes (before the terminating NUL bcrypt adds).
 * @param stored The stored value, e.g. `$2y$10$…`.
 * @returns The value to compare with `stored`, or `null` when `stored` is
 * not a bcrypt setting the C library accepts (cost 04 to 31).
 */
export function* bcryptHash(
  key: Uint8Array,
  stored: string,
): Generator<void, string | null> {
  const m = MAGIC.exec(stored);
  if (m === null) return null;
  const cost = Number(m[2]);
  if (cost < 4 || cost > 31) return null;
  const salt = decode(m[3]!, 16);
  if (salt === null) return null;
  // The key is the password with its NUL, at most 72 bytes.
  const k = new Uint8Array(Math.min(key.length + 1, 72));
  k.set(key.subarray(0, Math.min(key.length, k.length)));
  piWords ??= computePiWords();
  const bf = new Blowfish(piWords);
  bf.expand(k, salt);
  const empty = new Uint8Array(0);
  for (let round = 0; round < 2 ** cost; round++) {
    bf.expand(k, empty);
    bf.expand(salt, empty);
    yield;
  }
  const out = new Uint8Array(24);
  for (let pair = 0; pair < 3; pair++) {
    const o = pair * 8;
    bf.lr[0] = (ORPHEAN[o]! << 24) | (ORPHEAN[o + 1]! << 16) |
      (ORPHEAN[o + 2]! << 8) | ORPHEAN[o + 3]!;
    bf.lr[1] = (ORPHEAN[o + 4]! << 24) | (ORPHEAN[o + 5]! << 16) |
      (ORPHEAN[o + 6]! << 8) | ORPHEAN[o + 7]!;
    for (let i = 0; i < 64; i++) bf.encipher();
    for (let h = 0; h < 2; h++) {
      const w = bf.lr[h]!;
      out[o + h * 4] = w >>> 24;
      out[o + h * 4 + 1] = (w >>> 16) & 0xff;
      out[o + h * 4 + 2] = (w >>> 8) & 0xff;
      out[o + h * 4 + 3] = w & 0xff;
    }
  }
  return `$${m[1]}$${m[2]}$${encode(salt)}${encode(out.subarray(0, 23))}`;
}

/**
 * Whether `key` matches the bcrypt value `stored`.
 *
 * @param key The password bytes.
 * @param stored The stored value.
 * @returns Whether they match; a malformed value matches nothing.
 */
export function* bcryptCheck(
  key: Uint8Array,
  stored: string,
): Generator<void, boolean> {
  const hash = yield* bcryptHash(key, stored);
  return hash !== null && hash === stored;
}
