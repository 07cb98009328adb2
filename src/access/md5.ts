/**
 * MD5 (RFC 1321) for the MD5-crypt password formats. Written here rather
 * than taken from `node:crypto` because MD5-crypt hashes 1,000 short
 * messages per check: a hash object per message costs about 12 ms per
 * check there, this about 0.3 ms.
 *
 * @module
 */

/** K[i] = floor(|sin(i + 1)| × 2^32) (RFC 1321, section 3.4). */
const K = new Int32Array(64);
for (let i = 0; i < 64; i++) {
  K[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0;
}
const SHIFT = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const words = new Int32Array(16);

function rotl(x: number, s: number): number {
  return (x << s) | (x >>> (32 - s));
}

function compress(state: Int32Array, block: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++) {
    const j = at + i * 4;
    words[i] = block[j]! | (block[j + 1]! << 8) | (block[j + 2]! << 16) |
      (block[j + 3]! << 24);
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let t: number;
  // Four loops, one per round function, so no step branches on its round.
  for (let i = 0; i < 16; i++) {
    t = d;
    d = c;
    c = b;
    b = (b +
      rotl(
        (a + ((b & d) | (~b & t)) + K[i]! + words[i]!) | 0,
        SHIFT[i & 3]!,
      )) | 0;
    a = t;
  }
  for (let i = 16; i < 32; i++) {
    t = d;
    d = c;
    c = b;
    b = (b +
      rotl(
        (a + ((t & b) | (~t & d)) + K[i]! + words[(5 * i + 1) & 15]!) | 0,
        SHIFT[4 | (i & 3)]!,
      )) | 0;
    a = t;
  }
  for (let i = 32; i < 48; i++) {
    t = d;
    d = c;
    c = b;
    b = (b +
      rotl(
        (a + (b ^ d ^ t) + K[i]! + words[(3 * i + 5) & 15]!) | 0,
        SHIFT[8 | (i & 3)]!,
      )) | 0;
    a = t;
  }
  for (let i = 48; i < 64; i++) {
    t = d;
    d = c;
    c = b;
    b = (b +
      rotl(
        (a + (d ^ (b | ~t)) + K[i]! + words[(7 * i) & 15]!) | 0,
        SHIFT[12 | (i & 3)]!,
      )) | 0;
    a = t;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
}

/** Reused for padding: a check hashes 1,000 short messages. */
let scratch = new Uint8Array(256);
const state = new Int32Array(4);

/**
 * The MD5 digest of the concatenated parts.
 *
 * @param parts The message, in pieces.
 * @returns The 16-byte digest.
 *
 * @example Usage
 * ```ts
 * import { md5 } from "./md5.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const hex = [...md5([new TextEncoder().encode("abc")])]
 *   .map((b) => b.toString(16).padStart(2, "0")).join("");
 * strictEqual(hex, "900150983cd24fb0d6963f7d28e17f72");
 * ```
 */
export function md5(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const size = ((length + 8) >> 6) * 64 + 64;
  if (scratch.length < size) scratch = new Uint8Array(size);
  const padded = scratch;
  let at = 0;
  for (const p of parts) {
    padded.set(p, at);
    at += p.length;
  }
  padded.fill(0, length, size);
  padded[length] = 0x80;
  const bits = length * 8;
  const end = size - 8;
  padded[end] = bits & 0xff;
  padded[end + 1] = (bits >>> 8) & 0xff;
  padded[end + 2] = (bits >>> 16) & 0xff;
  padded[end + 3] = (bits >>> 24) & 0xff;
  padded[end + 4] = Math.floor(bits / 2 ** 32) & 0xff;
  state[0] = 0x67452301;
  state[1] = 0xefcdab89 | 0;
  state[2] = 0x98badcfe | 0;
  state[3] = 0x10325476;
  for (let i = 0; i < size; i += 64) compress(state, padded, i);
  const out = new Uint8Array(16);
  for (let i = 0; i < 4; i++) {
    const w = state[i]!;
    out[i * 4] = w & 0xff;
    out[i * 4 + 1] = (w >>> 8) & 0xff;
    out[i * 4 + 2] = (w >>> 16) & 0xff;
    out[i * 4 + 3] = (w >>> 24) & 0xff;
  }
  return out;
}
