/**
 * The addresses of `X-Forwarded-For` as `ngx_http_get_forwarded_addr`
 * reads them: separated by spaces and commas, each with or without a port.
 *
 * @module
 */

import { parseClientAddress, parseIpv4 } from "./address.ts";

/**
 * A space or comma, which separate the addresses of `X-Forwarded-For`.
 *
 * @param code A character code.
 * @returns Whether it separates addresses.
 */
export function isSeparator(code: number): boolean {
  return code === 0x20 || code === 0x2c;
}

/**
 * An address of `X-Forwarded-For`, with or without a port
 * (`ngx_parse_addr_port`).
 *
 * @param text One address as the field holds it.
 * @returns The address without its port, or `null` when it is none.
 */
export function withoutPort(text: string): string | null {
  if (parseClientAddress(text) !== null) return text;
  const v6 = /^\[([^\]]*)\](?::\d+)?$/.exec(text);
  if (v6 !== null) return parseClientAddress(v6[1]!) === null ? null : v6[1]!;
  const v4 = /^([^:]*):\d+$/.exec(text);
  if (v4 !== null && parseIpv4(v4[1]!) !== null) return v4[1]!;
  return null;
}
