/**
 * SHA-crypt (`$5$` SHA-256, `$6$` SHA-512; Ulrich Drepper's specification,
 * "Unix crypt using SHA-256 and SHA-512"), as the C library's `crypt()`
 * checks it on Linux, where nginx hands such values to it. A generator that
 * yields every 256 rounds so a check can run in slices.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { byteStringToBytes } from "../runtime/mod.ts";

const ITOA64 =
  "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The byte order of the output, in groups of three (the spec's table). */
function order(size: 32 | 64): number[][] {
  const third = size === 32 ? 10 : 21;
  const groups: number[][] = [];
  for (let k = 0; k < third; k++) {
    const a = k;
    const b = k + third;
    const c = k + 2 * third;
    const turn = k % 3;
    if (turn === 0) groups.push([a, b, c]);
    else if ((turn === 1) === (size === 32)) groups.push([c, a, b]);
    else groups.push([b, c, a]);
  }
  return groups;
}
const ORDER = { 32: order(32), 64: order(64) };

function to64(v: number, n: number): string {
  let out = "";
  for (; n > 0; n--, v >>>= 6) out += ITOA64[v & 0x3f];
  return out;
}

function repeatTo(bytes: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i += bytes.length) {
    out.set(bytes.subarray(0, Math.min(bytes.length, length - i)), i);
  }
  return out;
}

const SETTING = /^\$([56])\$(?:rounds=([0-9]+)\$)?([^$]{0,16})/;

/**
 * Computes the SHA-crypt value of `key` with the settings of `stored`.
 *
 * @param key The password bytes.
 * @param stored The stored value (`$5$salt$…`, `$6$rounds=N$salt$…`).
 * @returns The value to compare with `stored`, or `null` when `stored` is
 * not a setting the C library accepts.
 */
export function* shaCryptHash(
  key: Uint8Array,
  stored: string,
): Generator<void, string | null> {
  const m = SETTING.exec(stored);
  if (m === null) return null;
  const algorithm = m[1] === "5" ? "sha256" : "sha512";
  const size = m[1] === "5" ? 32 : 64;
  const custom = m[2] !== undefined;
  const rounds = custom
    ? Math.min(Math.max(Number(m[2]), 1000), 999_999_999)
    : 5000;
  const saltText = m[3]!;
  const salt = byteStringToBytes(saltText);
  const hash = (...parts: Uint8Array[]): Uint8Array => {
    const h = createHash(algorithm);
    for (const p of parts) h.update(p);
    return new Uint8Array(h.digest());
  };
  const b = hash(key, salt, key);
  const parts: Uint8Array[] = [key, salt, repeatTo(b, key.length)];
  for (let n = key.length; n > 0; n >>= 1) parts.push(n & 1 ? b : key);
  let c = hash(...parts);
  const p = repeatTo(hash(...Array(key.length).fill(key)), key.length);
  const s = repeatTo(hash(...Array(16 + c[0]!).fill(salt)), salt.length);
  for (let i = 0; i < rounds; i++) {
    const round: Uint8Array[] = [i & 1 ? p : c];
    if (i % 3) round.push(s);
    if (i % 7) round.push(p);
    round.push(i & 1 ? c : p);
    c = hash(...round);
    if ((i & 255) === 255) yield;
  }
  let out = `$${m[1]}$${custom ? `rounds=${rounds}$` : ""}${saltText}$`;
  for (const [x, y, z] of ORDER[size]) {
    out += to64((c[x!]! << 16) | (c[y!]! << 8) | c[z!]!, 4);
  }
  out += size === 32 ? to64((c[31]! << 8) | c[30]!, 3) : to64(c[63]!, 2);
  return out;
}
