/**
 * IP address text to bytes, read as nginx reads it (`ngx_inet_addr`,
 * `ngx_inet6_addr` in `src/core/ngx_inet.c`), so `allow`/`deny` accept and
 * refuse exactly the texts nginx does: `1..2.3` is `1.0.2.3` there, and
 * `255.255.255.255` is `INADDR_NONE`, refused as an address. The one
 * reader of address text: `allow`/`deny`, `geo` and a `proxy_pass` host
 * from variables (`host_address.ts`) all go through it.
 *
 * @module
 */

/**
 * An IPv4 address as nginx's `ngx_inet_addr` reads it: digits and exactly
 * three dots, each octet at most 255 (an empty octet is 0).
 *
 * @param text The text.
 * @returns The address as an unsigned 32-bit number, or `null`.
 *
 * @example Usage
 * ```ts
 * import { parseIpv4 } from "./address.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseIpv4("10.0.0.1"), 0x0a000001);
 * strictEqual(parseIpv4("255.255.255.255"), null);
 * ```
 */
export function parseIpv4(text: string): number | null {
  let addr = 0;
  let octet = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      octet = octet * 10 + (c - 0x30);
      if (octet > 255) return null;
      continue;
    }
    if (c === 0x2e) {
      if (++dots > 3) return null;
      addr = addr * 256 + octet;
      octet = 0;
      continue;
    }
    return null;
  }
  if (dots !== 3) return null;
  addr = addr * 256 + octet;
  // INADDR_NONE doubles as nginx's error value.
  return addr === 0xffffffff ? null : addr;
}

/**
 * An IPv6 address as nginx's `ngx_inet6_addr` reads it: hex groups, one
 * `::`, and an IPv4 tail (`::ffff:1.2.3.4`).
 *
 * @param text The text, without brackets or zone.
 * @returns The 16 bytes, or `null`.
 *
 * @example Usage
 * ```ts
 * import { parseIpv6 } from "./address.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseIpv6("::1")?.[15], 1);
 * strictEqual(parseIpv6("1:::2"), null);
 * ```
 */
export function parseIpv6(text: string): Uint8Array | null {
  if (text.length === 0) return null;
  const out = new Uint8Array(16);
  let at = 0; // next byte written
  let zero = -1; // where `::` stands
  let groupStart = -1; // index in text of the current group, for an IPv4 tail
  let nibbles = 0;
  let word = 0;
  let groups = 8;
  let i = text[0] === ":" ? 1 : 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) {
      if (nibbles > 0) {
        groupStart = i + 1;
        out[at++] = word >> 8;
        out[at++] = word & 0xff;
        if (--groups === 0) return null;
        nibbles = 0;
        word = 0;
        continue;
      }
      if (zero >= 0) return null;
      groupStart = i + 1;
      zero = at;
      continue;
    }
    if (c === 0x2e && nibbles > 0) {
      if (groups < 2 || groupStart < 0) return null;
      const v4 = parseIpv4(text.slice(groupStart));
      if (v4 === null) return null;
      out[at++] = v4 >>> 24;
      out[at++] = (v4 >>> 16) & 0xff;
      word = v4 & 0xffff;
      groups--;
      nibbles = 1; // the last two bytes are written below
      i = text.length;
      break;
    }
    if (++nibbles > 4) return null;
    const hex = c >= 0x30 && c <= 0x39
      ? c - 0x30
      : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66
      ? (c | 0x20) - 0x61 + 10
      : -1;
    if (hex < 0) return null;
    word = word * 16 + hex;
  }
  if (nibbles === 0 && zero < 0) return null;
  out[at++] = word >> 8;
  out[at++] = word & 0xff;
  if (--groups > 0) {
    if (zero < 0) return null;
    // Move what follows `::` to the end and zero the gap.
    const tail = out.slice(zero, at);
    out.fill(0, zero);
    out.set(tail, 16 - tail.length);
    return out;
  }
  return zero < 0 ? out : null;
}

/** A client address in the form rules compare against. */
export type ClientAddress =
  | { family: 4; addr: number }
  | { family: 6; bytes: Uint8Array; mapped: number | null };

/**
 * A client's address as `Deno.serve` reports it (`127.0.0.1`, `::1`,
 * `::ffff:10.0.0.1`, `fe80::1%eth0`), for rule matching. An IPv4-mapped
 * IPv6 address keeps its IPv4 part: nginx matches it against IPv4 rules
 * when there are any (`ngx_http_access_handler`).
 *
 * @param text The address.
 * @returns The address, or `null` for what is not an IP address (a Unix
 * socket path).
 *
 * @example Usage
 * ```ts
 * import { parseClientAddress } from "./address.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseClientAddress("10.0.0.1"), { family: 4, addr: 0x0a000001 });
 * ```
 */
export function parseClientAddress(text: string): ClientAddress | null {
  const v4 = parseIpv4(text);
  if (v4 !== null) return { family: 4, addr: v4 };
  let bare = text;
  if (bare.startsWith("[") && bare.endsWith("]")) bare = bare.slice(1, -1);
  const percent = bare.indexOf("%");
  if (percent >= 0) bare = bare.slice(0, percent);
  const bytes = parseIpv6(bare);
  if (bytes === null) return null;
  let mapped: number | null = null;
  if (
    bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff &&
    bytes[11] === 0xff
  ) {
    mapped = ((bytes[12]! << 24) >>> 0) + (bytes[13]! << 16) +
      (bytes[14]! << 8) + bytes[15]!;
  }
  return { family: 6, bytes, mapped };
}
