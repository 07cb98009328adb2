/**
 * The table of a `geo` block (`ngx_http_geo_module`): networks or IPv4
 * ranges with their values, built entry by entry as nginx reads the block
 * (its warnings and errors as data), then looked up per request with the
 * longest matching network, or the innermost range. A client address that
 * is not an IP address is looked up as `255.255.255.255` (nginx's
 * `INADDR_NONE`), so it gets the default unless a network holds that.
 *
 * A network is read by `geo_networks.ts`, a range by `geo_ranges.ts`, the
 * addresses of `X-Forwarded-For` by `forwarded_for.ts`.
 *
 * @module
 */

import {
  AccessList,
  type AccessRule,
  parseAccessRule,
} from "./access_rules.ts";
import { parseClientAddress } from "./address.ts";
import { isSeparator, withoutPort } from "./forwarded_for.ts";
import { maskedHex, network } from "./geo_networks.ts";
import { flatten, parseRange, type Range, rangeText } from "./geo_ranges.ts";

/** What adding one entry gave: nginx's `[warn]` or `[emerg]` text, if any. */
export type GeoEntryResult =
  | { ok: true; warning: string | null }
  | { ok: false; error: string };

const OK: GeoEntryResult = { ok: true, warning: null };
const NONE_ADDRESS = 0xffffffff;

/**
 * A `geo` table. `ranges` mode holds IPv4 ranges only (`a.b.c.d-e.f.g.h`);
 * the default mode holds IPv4 and IPv6 networks (`addr`, `addr/bits`).
 *
 * @example Usage
 * ```ts
 * import { GeoTable } from "./geo_table.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const geo = new GeoTable(false);
 * geo.add("default", "outside");
 * geo.add("10.0.0.0/8", "lan");
 * geo.add("10.1.0.0/16", "lab");
 * strictEqual(geo.lookup("10.1.2.3"), "lab");
 * strictEqual(geo.lookup("10.2.0.1"), "lan");
 * strictEqual(geo.lookup("::ffff:10.2.0.1"), "lan");
 * strictEqual(geo.lookup("8.8.8.8"), "outside");
 * ```
 */
export class GeoTable {
  /** IPv4 networks: by mask, the network's address → value. */
  #v4 = new Map<number, Map<number, string>>();
  /** IPv6 networks: by prefix length, the masked address (hex) → value. */
  #v6 = new Map<number, Map<string, string>>();
  /** Masks and lengths, longest first, once the table is complete. */
  #masks4: number[] | null = null;
  #lengths6: number[] | null = null;
  #ranges: Range[] = [];
  /** The greatest end of the ranges added: a range past it overlaps none. */
  #maxEnd = -1;
  /** Disjoint ranges for the lookup, once the table is complete. */
  #flat: Range[] | null = null;
  #default = "";
  #proxies: AccessRule[] = [];
  #trusted: AccessList | null = null;
  /** `proxy_recursive`: walk X-Forwarded-For past trusted addresses. */
  proxyRecursive = false;

  /**
   * @param ranges `ranges` mode.
   */
  constructor(readonly ranges: boolean) {}

  /**
   * `proxy`: a network whose `X-Forwarded-For` is believed.
   *
   * @param key The network.
   * @returns nginx's warning or error, if any.
   */
  addProxy(key: string): GeoEntryResult {
    const parsed = parseAccessRule("allow", key);
    if (
      !parsed.ok || parsed.rule.family === "all" ||
      parsed.rule.family === "unix"
    ) {
      return { ok: false, error: `invalid network "${key}"` };
    }
    this.#proxies.push(parsed.rule);
    this.#trusted = new AccessList(this.#proxies);
    return { ok: true, warning: parsed.warning };
  }

  /** Whether the block has `proxy` networks (it reads `X-Forwarded-For`). */
  get hasProxies(): boolean {
    return this.#trusted !== null;
  }

  /**
   * The address the block looks up (`ngx_http_geo_real_addr`): the source
   * address, or, when that is a trusted proxy, the last address of
   * `X-Forwarded-For` (further left past trusted ones with
   * `proxy_recursive`), as `ngx_http_get_forwarded_addr` reads it.
   *
   * @param address The source address.
   * @param forwardedFor The request's `X-Forwarded-For`, or `""`.
   * @returns The address to look up.
   */
  realAddress(address: string, forwardedFor: string): string {
    const trusted = this.#trusted;
    if (trusted === null || forwardedFor === "") return address;
    let current = address;
    // Each step takes one address off the end, scanning back from `end`
    // once in all (ngx_http_get_forwarded_addr_internal): linear in the
    // field, where a regex trimming the rest per step was quadratic on a
    // client's long run of spaces.
    let end = forwardedFor.length;
    while (end > 0 && trusted.match(current) !== null) {
      while (end > 0 && isSeparator(forwardedFor.charCodeAt(end - 1))) end--;
      let start = end;
      while (start > 0 && !isSeparator(forwardedFor.charCodeAt(start - 1))) {
        start--;
      }
      const next = withoutPort(forwardedFor.slice(start, end));
      if (next === null) break;
      current = next;
      if (!this.proxyRecursive) break;
      end = start;
    }
    return current;
  }

  /**
   * Adds one entry (`default` or a network or range) with its value, as
   * `ngx_http_geo_cidr_add` / `ngx_http_geo_add_range` do.
   *
   * @param key `default`, a network, or (in `ranges` mode) a range.
   * @param value The value, taken as written (geo values are not variables).
   * @returns nginx's warning or error, if any.
   */
  add(key: string, value: string): GeoEntryResult {
    this.#masks4 = this.#lengths6 = this.#flat = null;
    if (key === "default") {
      this.#default = value;
      return OK;
    }
    if (this.ranges) return this.#addRange(key, value);
    const net = network(key);
    if (net === null) return { ok: false, error: `invalid network "${key}"` };
    const old = net.family === 4
      ? this.#slot4(net.mask).get(net.addr4)
      : this.#slot6(net.length).get(net.addr6);
    if (net.family === 4) this.#slot4(net.mask).set(net.addr4, value);
    else this.#slot6(net.length).set(net.addr6, value);
    if (old !== undefined) {
      return {
        ok: true,
        warning:
          `duplicate network "${key}", value: "${value}", old value: "${old}"`,
      };
    }
    return { ok: true, warning: net.warning };
  }

  /**
   * Removes a network or range added before (`delete`).
   *
   * @param key The network or range as written.
   * @returns nginx's warning when there was none, or an error.
   */
  delete(key: string): GeoEntryResult {
    this.#masks4 = this.#lengths6 = this.#flat = null;
    if (this.ranges) {
      const range = parseRange(key);
      if (range === null) return { ok: false, error: `invalid range "${key}"` };
      const i = this.#ranges.findIndex((r) =>
        r.start === range.start && r.end === range.end
      );
      if (i < 0) {
        return { ok: true, warning: `no address range "${key}" to delete` };
      }
      this.#ranges.splice(i, 1);
      return OK;
    }
    const net = network(key);
    if (net === null) return { ok: false, error: `invalid network "${key}"` };
    const gone = net.family === 4
      ? this.#slot4(net.mask).delete(net.addr4)
      : this.#slot6(net.length).delete(net.addr6);
    return gone ? OK : { ok: true, warning: `no network "${key}" to delete` };
  }

  /**
   * The value for an address (`$remote_addr`, or the block's source).
   *
   * @param address The address text; anything else is `255.255.255.255`.
   * @returns The value.
   */
  lookup(address: string): string {
    const parsed = parseClientAddress(address);
    if (parsed?.family === 6 && parsed.mapped === null) {
      // ranges mode holds IPv4 only: any other address is INADDR_NONE.
      return this.ranges
        ? this.#rangeValue(NONE_ADDRESS)
        : this.#value6(parsed.bytes);
    }
    // An IPv4-mapped IPv6 address is looked up as IPv4 (IN6_IS_ADDR_V4MAPPED).
    const v4 = parsed === null
      ? NONE_ADDRESS
      : parsed.family === 4
      ? parsed.addr
      : parsed.mapped ?? NONE_ADDRESS;
    return this.ranges ? this.#rangeValue(v4) : this.#value4(v4);
  }

  #slot4(mask: number): Map<number, string> {
    let slot = this.#v4.get(mask);
    if (slot === undefined) this.#v4.set(mask, slot = new Map());
    return slot;
  }

  #slot6(length: number): Map<string, string> {
    let slot = this.#v6.get(length);
    if (slot === undefined) this.#v6.set(length, slot = new Map());
    return slot;
  }

  #value4(addr: number): string {
    this.#masks4 ??= [...this.#v4.keys()].sort((a, b) => b - a);
    for (const mask of this.#masks4) {
      const value = this.#v4.get(mask)!.get((addr & mask) >>> 0);
      if (value !== undefined) return value;
    }
    return this.#default;
  }

  #value6(addr: Uint8Array): string {
    this.#lengths6 ??= [...this.#v6.keys()].sort((a, b) => b - a);
    for (const length of this.#lengths6) {
      const value = this.#v6.get(length)!.get(maskedHex(addr, length));
      if (value !== undefined) return value;
    }
    return this.#default;
  }

  #addRange(key: string, value: string): GeoEntryResult {
    const range = parseRange(key);
    if (range === null) return { ok: false, error: `invalid range "${key}"` };
    // A range may lie inside one added before (it wins there); any other
    // overlap is refused, as ngx_http_geo_add_range does. Files of many
    // ranges list them in order: one past every other is checked at once.
    const past = range.start > this.#maxEnd;
    for (const r of past ? [] : this.#ranges) {
      if (r.end < range.start || r.start > range.end) continue;
      if (r.start <= range.start && range.end <= r.end) continue;
      return {
        ok: false,
        error: `range "${key}" overlaps "${rangeText(r)}"`,
      };
    }
    this.#ranges.push({ ...range, value });
    this.#maxEnd = Math.max(this.#maxEnd, range.end);
    return OK;
  }

  #rangeValue(addr: number): string {
    this.#flat ??= flatten(this.#ranges);
    const flat = this.#flat;
    let lo = 0;
    let hi = flat.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = flat[mid]!;
      if (addr < r.start) hi = mid - 1;
      else if (addr > r.end) lo = mid + 1;
      else return r.value;
    }
    return this.#default;
  }
}
