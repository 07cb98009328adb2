/**
 * A `proxy_pass` host from variables as nginx reads it (`ngx_parse_url`):
 * an IP address through the one reader of address text (`address.ts`),
 * printed as nginx prints it (`ngx_sock_ntop`).
 *
 * @module
 */

import { parseIpv4, parseIpv6 } from "./address.ts";

/**
 * An IPv6 address as nginx prints it (`ngx_inet6_ntop`): lower-case hex
 * groups, the longest run of two or more zero groups as `::`, and the last
 * four bytes dotted for an IPv4-mapped or -compatible address.
 *
 * @param p The 16 bytes.
 * @returns The text, without brackets.
 *
 * @example Usage
 * ```ts
 * import { parseIpv6 } from "./address.ts";
 * import { formatIpv6 } from "./host_address.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(formatIpv6(parseIpv6("0:0:0:0:0:0:0:1")!), "::1");
 * strictEqual(formatIpv6(parseIpv6("::FFFF:7f00:1")!), "::ffff:127.0.0.1");
 * ```
 */
export function formatIpv6(p: Uint8Array): string {
  let zero = -1;
  let last = -1;
  let max = 1;
  let n = 0;
  for (let i = 0; i < 16; i += 2) {
    if (p[i] || p[i + 1]) {
      if (max < n) {
        zero = last;
        max = n;
      }
      n = 0;
      continue;
    }
    if (n++ === 0) last = i;
  }
  if (max < n) {
    zero = last;
    max = n;
  }
  let out = "";
  let end = 16;
  if (zero === 0) {
    if (
      (max === 5 && p[10] === 0xff && p[11] === 0xff) || max === 6 ||
      (max === 7 && p[14] !== 0 && p[15] !== 1)
    ) {
      end = 12;
    }
    out += ":";
  }
  for (let i = 0; i < end; i += 2) {
    if (i === zero) {
      out += ":";
      i += (max - 1) * 2;
      continue;
    }
    out += (p[i]! * 256 + p[i + 1]!).toString(16);
    if (i < 14) out += ":";
  }
  if (end === 12) out += `${p[12]}.${p[13]}.${p[14]}.${p[15]}`;
  return out;
}

/**
 * The address a `proxy_pass` host names, as `ngx_parse_url` reads it, in
 * the form nginx prints it (`ngx_sock_ntop`), which is also the form the
 * socket is opened with: an IPv4 address as `ngx_inet_addr` takes it
 * (`127.000.000.001` and `127.0..1` are `127.0.0.1`; `127.1` and
 * `0x7f.0.0.1` are names), or `[IPv6]` as `ngx_inet6_addr` takes it (no
 * zone). `null` for a name.
 *
 * @param host The host as written, IPv6 in brackets.
 * @returns The address, IPv6 in brackets, or `null`.
 *
 * @example Usage
 * ```ts
 * import { hostAddress } from "./host_address.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(hostAddress("010.0.0.1"), "10.0.0.1");
 * strictEqual(hostAddress("[0::1]"), "[::1]");
 * strictEqual(hostAddress("127.1"), null);
 * strictEqual(hostAddress("[fe80::1%eth0]"), null);
 * ```
 */
export function hostAddress(host: string): string | null {
  if (host.startsWith("[") && host.endsWith("]")) {
    const bytes = parseIpv6(host.slice(1, -1));
    return bytes === null ? null : `[${formatIpv6(bytes)}]`;
  }
  const v4 = parseIpv4(host);
  return v4 === null
    ? null
    : `${v4 >>> 24}.${(v4 >>> 16) & 0xff}.${(v4 >>> 8) & 0xff}.${v4 & 0xff}`;
}
