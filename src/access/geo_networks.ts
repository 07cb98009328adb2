/**
 * The networks of a `geo` block in its default mode: a network as
 * `ngx_ptocidr` reads it, keyed for the table by its masked address.
 *
 * @module
 */

import { parseAccessRule } from "./access_rules.ts";

/**
 * A network as `ngx_ptocidr` reads it, with its key for the table.
 *
 * @param text The network as written (`10.0.0.0/8`, `::1`).
 * @returns It, with nginx's warning for host bits set, or `null`.
 */
export function network(text: string):
  | { family: 4; addr4: number; mask: number; warning: string | null }
  | { family: 6; addr6: string; length: number; warning: string | null }
  | null {
  const parsed = parseAccessRule("allow", text);
  if (!parsed.ok) return null;
  const { rule, warning } = parsed;
  if (rule.family === 4) {
    return { family: 4, addr4: rule.addr4, mask: rule.mask4, warning };
  }
  if (rule.family !== 6) return null;
  let length = 0;
  for (const byte of rule.mask6) {
    for (let bit = 7; bit >= 0 && (byte >> bit) & 1; bit--) length++;
  }
  return {
    family: 6,
    addr6: maskedHex(rule.addr6, length),
    length,
    warning,
  };
}

/**
 * The first `length` bits of an IPv6 address, as a map key.
 *
 * @param addr The address's 16 bytes.
 * @param length The prefix length.
 * @returns The masked address in hex.
 */
export function maskedHex(addr: Uint8Array, length: number): string {
  let out = "";
  for (let i = 0; i < 16; i++) {
    const bits = Math.max(0, Math.min(8, length - i * 8));
    const byte = addr[i]! & ((0xff << (8 - bits)) & 0xff);
    out += byte.toString(16).padStart(2, "0");
  }
  return out;
}
