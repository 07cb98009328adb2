/**
 * `allow` and `deny` (`ngx_http_access_module`): rules compiled once from
 * the directives' arguments, checked per request in order, the first match
 * deciding. As in nginx the rules are kept in two lists, IPv4 and IPv6 (`all`
 * goes into both), and an IPv4-mapped IPv6 client (`::ffff:10.0.0.1`) is
 * matched against the IPv4 list whenever there is one.
 *
 * @module
 */

import { parseClientAddress, parseIpv4, parseIpv6 } from "./address.ts";

/** One compiled `allow` or `deny`. */
export interface AccessRule {
  /** `deny` rather than `allow`. */
  readonly deny: boolean;
  /** `all`, an IPv4 network, an IPv6 network, or `unix:`. */
  readonly family: "all" | 4 | 6 | "unix";
  /** IPv4: the network, its low bits cleared. */
  readonly addr4: number;
  /** IPv4: the mask. */
  readonly mask4: number;
  /** IPv6: the network, its low bits cleared. */
  readonly addr6: Uint8Array;
  /** IPv6: the mask. */
  readonly mask6: Uint8Array;
  /** The argument as written, for messages. */
  readonly text: string;
}

/** What compiling one `allow`/`deny` gave. */
export type AccessRuleResult =
  | {
    ok: true;
    rule: AccessRule;
    /** nginx's `[warn]` at load, e.g. `low address bits of 10.0.0.1/8 are meaningless`. */
    warning: string | null;
  }
  | {
    ok: false;
    /** nginx's `[emerg]` message: `invalid parameter "x"`. */
    error: string;
  };

const NONE = new Uint8Array(16);

/**
 * Compiles one `allow` or `deny` as `ngx_http_access_rule` and
 * `ngx_ptocidr` do: `all`, `unix:`, an address (all bits significant) or
 * `address/bits`.
 *
 * @param directive `allow` or `deny`.
 * @param arg Its one argument.
 * @returns The rule and any warning, or nginx's error message.
 *
 * @example Usage
 * ```ts
 * import { parseAccessRule } from "./access_rules.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const r = parseAccessRule("allow", "10.1.2.3/8");
 * strictEqual(r.ok && r.warning, "low address bits of 10.1.2.3/8 are meaningless");
 * ```
 */
export function parseAccessRule(
  directive: "allow" | "deny",
  arg: string,
): AccessRuleResult {
  const deny = directive === "deny";
  const base = {
    deny,
    addr4: 0,
    mask4: 0,
    addr6: NONE,
    mask6: NONE,
    text: arg,
  };
  if (arg === "all") {
    return { ok: true, rule: { ...base, family: "all" }, warning: null };
  }
  if (arg === "unix:") {
    return { ok: true, rule: { ...base, family: "unix" }, warning: null };
  }
  const invalid = { ok: false, error: `invalid parameter "${arg}"` } as const;
  const slash = arg.indexOf("/");
  const addrText = slash < 0 ? arg : arg.slice(0, slash);
  const shiftText = slash < 0 ? null : arg.slice(slash + 1);
  // ngx_atoi: digits only, at least one.
  if (shiftText !== null && !/^[0-9]+$/.test(shiftText)) return invalid;
  const shift = shiftText === null ? null : Number(shiftText);
  const v4 = parseIpv4(addrText);
  if (v4 !== null) {
    if (shift !== null && shift > 32) return invalid;
    const mask = shift === null || shift === 32
      ? 0xffffffff
      : shift === 0
      ? 0
      : (0xffffffff << (32 - shift)) >>> 0;
    const addr4 = (v4 & mask) >>> 0;
    return {
      ok: true,
      rule: { ...base, family: 4, addr4, mask4: mask },
      warning: addr4 === v4 ? null : meaningless(arg),
    };
  }
  const v6 = parseIpv6(addrText);
  if (v6 === null) return invalid;
  if (shift !== null && shift > 128) return invalid;
  const mask6 = new Uint8Array(16);
  let left = shift ?? 128;
  let changed = false;
  for (let i = 0; i < 16; i++) {
    const s = Math.min(left, 8);
    left -= s;
    mask6[i] = (0xff << (8 - s)) & 0xff;
    if ((v6[i]! & mask6[i]!) !== v6[i]) {
      changed = true;
      v6[i] = v6[i]! & mask6[i]!;
    }
  }
  return {
    ok: true,
    rule: { ...base, family: 6, addr6: v6, mask6 },
    warning: changed ? meaningless(arg) : null,
  };
}

function meaningless(arg: string): string {
  return `low address bits of ${arg} are meaningless`;
}

/**
 * A location's `allow`/`deny` list, compiled: the lead merges levels by
 * nginx's array rule (a level with any rule replaces its parent's list).
 */
export class AccessList {
  readonly #v4: readonly AccessRule[] | null;
  readonly #v6: readonly AccessRule[] | null;

  /** @param rules The rules in file order. */
  constructor(rules: readonly AccessRule[]) {
    const v4 = rules.filter((r) => r.family === 4 || r.family === "all");
    const v6 = rules.filter((r) => r.family === 6 || r.family === "all");
    this.#v4 = v4.length > 0 ? v4 : null;
    this.#v6 = v6.length > 0 ? v6 : null;
  }

  /** Whether no rule applies to IP clients (nginx declines at once). */
  get empty(): boolean {
    return this.#v4 === null && this.#v6 === null;
  }

  /**
   * The first rule that matches a client, as `ngx_http_access_handler`.
   *
   * @param remoteAddr The client address as `Deno.serve` reports it.
   * @returns The matching rule, or `null` when none does (nginx declines:
   * the request goes on).
   *
   * @example Usage
   * ```ts
   * import { AccessList, parseAccessRule, type AccessRule } from "./access_rules.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const rule = (d: "allow" | "deny", a: string): AccessRule => {
   *   const r = parseAccessRule(d, a);
   *   if (!r.ok) throw new Error(r.error);
   *   return r.rule;
   * };
   * const list = new AccessList([rule("allow", "127.0.0.1"), rule("deny", "all")]);
   * strictEqual(list.match("127.0.0.1")?.deny, false);
   * strictEqual(list.match("::1")?.deny, true);
   * ```
   */
  match(remoteAddr: string): AccessRule | null {
    if (this.empty) return null;
    const client = parseClientAddress(remoteAddr);
    if (client === null) return null;
    if (client.family === 4 || (client.mapped !== null && this.#v4 !== null)) {
      if (this.#v4 === null) return null;
      const addr = client.family === 4 ? client.addr : client.mapped!;
      for (const rule of this.#v4) {
        if (((addr & rule.mask4) >>> 0) === rule.addr4) return rule;
      }
      return null;
    }
    if (this.#v6 === null) return null;
    const bytes = client.bytes;
    next: for (const rule of this.#v6) {
      for (let n = 0; n < 16; n++) {
        if ((bytes[n]! & rule.mask6[n]!) !== rule.addr6[n]) continue next;
      }
      return rule;
    }
    return null;
  }
}
