/**
 * CRC-32 as nginx computes it (`ngx_crc32.h`): the `hash` balancing
 * method hashes keys and server addresses with it.
 *
 * @module
 */

/** CRC-32 (IEEE 802.3, reflected), the table `ngx_crc32_update` uses. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** `ngx_crc32_init`: the running value before any byte. */
export const CRC32_INIT = 0xffffffff;

/**
 * `ngx_crc32_update`: the running CRC-32 after `bytes`.
 *
 * @param crc The running value ({@linkcode CRC32_INIT} at first).
 * @param bytes The bytes.
 * @returns The running value; `(crc ^ 0xffffffff) >>> 0` is the CRC.
 */
export function crc32Update(crc: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  }
  return crc >>> 0;
}

/**
 * The CRC-32 of bytes (`ngx_crc32_long`).
 *
 * @param bytes The bytes.
 * @returns The CRC, unsigned.
 *
 * @example Usage
 * ```ts
 * import { crc32 } from "./crc32.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
 * ```
 */
export function crc32(bytes: Uint8Array): number {
  return (crc32Update(CRC32_INIT, bytes) ^ 0xffffffff) >>> 0;
}
