import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  AccessList,
  type AccessRule,
  parseAccessRule,
  parseIpv4,
  parseIpv6,
} from "../../src/access/mod.ts";

function hex(bytes: Uint8Array | null): string | null {
  return bytes === null
    ? null
    : [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// ngx_inet_addr's reading, quirks included.
const V4: [string, number | null][] = [
  ["127.0.0.1", 0x7f000001],
  ["0.0.0.0", 0],
  ["1..2.3", 0x01000203], // an empty octet is 0
  ["255.255.255.255", null], // INADDR_NONE is nginx's error value
  ["256.0.0.1", null],
  ["1.2.3", null],
  ["1.2.3.4.5", null],
  ["1.2.3.4 ", null],
  ["", null],
];
for (const [text, want] of V4) {
  Deno.test(`parseIpv4() reads ${JSON.stringify(text)} as nginx`, () => {
    strictEqual(parseIpv4(text), want);
  });
}

const V6: [string, string | null][] = [
  ["::1", "00000000000000000000000000000001"],
  ["::", "00000000000000000000000000000000"],
  ["fe80::1:2", "fe800000000000000000000000010002"],
  ["2001:db8::", "20010db8000000000000000000000000"],
  ["::ffff:10.0.0.1", "00000000000000000000ffff0a000001"],
  ["1:2:3:4:5:6:7:8", "00010002000300040005000600070008"],
  ["1:2:3:4:5:6:7:8:9", null],
  ["1:::2", null],
  ["1::2::3", null],
  ["12345::", null],
  ["g::", null],
  ["1:2:3:4:5:6:7", null],
  ["", null],
];
for (const [text, want] of V6) {
  Deno.test(`parseIpv6() reads ${JSON.stringify(text)} as nginx`, () => {
    strictEqual(hex(parseIpv6(text)), want);
  });
}

// [directive argument, error or null, warning or null]
const RULES: [string, string | null, string | null][] = [
  ["all", null, null],
  ["unix:", null, null],
  ["10.0.0.0/8", null, null],
  ["10.1.2.3/8", null, "low address bits of 10.1.2.3/8 are meaningless"],
  ["10.1.2.3/0", null, "low address bits of 10.1.2.3/0 are meaningless"],
  ["10.1.2.3/32", null, null],
  ["10.1.2.3/33", 'invalid parameter "10.1.2.3/33"', null],
  ["10.1.2.3/", 'invalid parameter "10.1.2.3/"', null],
  ["10.1.2.3/-1", 'invalid parameter "10.1.2.3/-1"', null],
  ["fe80::/10", null, null],
  ["fe80::1/64", null, "low address bits of fe80::1/64 are meaningless"],
  ["::/129", 'invalid parameter "::/129"', null],
  ["localhost", 'invalid parameter "localhost"', null],
  ["255.255.255.255", 'invalid parameter "255.255.255.255"', null],
  ["ALL", 'invalid parameter "ALL"', null],
];
for (const [arg, error, warning] of RULES) {
  Deno.test(`parseAccessRule() "${arg}": nginx's messages`, () => {
    const r = parseAccessRule("allow", arg);
    if (error !== null) {
      deepStrictEqual(r, { ok: false, error });
    } else {
      strictEqual(r.ok, true);
      strictEqual(r.ok && r.warning, warning);
    }
  });
}

function list(...rules: string[]): AccessList {
  return new AccessList(rules.map((text): AccessRule => {
    const [directive, arg] = text.split(" ") as ["allow" | "deny", string];
    const r = parseAccessRule(directive, arg);
    if (!r.ok) throw new Error(r.error);
    return r.rule;
  }));
}

// [rules, client, "allow" | "deny" | null (no rule matched: nginx goes on)]
const MATCHES: [string[], string, "allow" | "deny" | null][] = [
  [["deny all"], "127.0.0.1", "deny"],
  [["deny all"], "::1", "deny"],
  [["allow 127.0.0.1", "deny all"], "127.0.0.1", "allow"],
  [["allow 127.0.0.1", "deny all"], "127.0.0.2", "deny"],
  [["deny 127.0.0.1", "allow all"], "127.0.0.1", "deny"],
  [["allow 10.0.0.0/8"], "192.168.1.1", null], // no match: not refused
  [["allow 10.1.2.3/8", "deny all"], "10.200.0.1", "allow"], // bits cleared
  [["allow 0.0.0.0/0", "deny all"], "8.8.8.8", "allow"],
  [["allow 10.0.0.0/8", "deny all"], "::ffff:10.1.1.1", "allow"],
  [["allow 10.0.0.0/8", "deny all"], "::ffff:11.1.1.1", "deny"],
  // Only IPv6 rules: a mapped client is matched as IPv6.
  [["deny ::ffff:10.0.0.0/104"], "::ffff:10.9.9.9", "deny"],
  [["deny ::ffff:10.0.0.0/104"], "10.9.9.9", null],
  // Only IPv4 rules: an IPv6 client matches nothing.
  [["deny 127.0.0.1"], "::1", null],
  [["allow ::1", "deny all"], "::1", "allow"],
  [["allow ::1", "deny all"], "[::1]", "allow"],
  [["allow fe80::/10", "deny all"], "fe80::1%eth0", "allow"],
  [["allow fe80::/10", "deny all"], "fe80::1", "allow"],
  [["allow fe80::/10", "deny all"], "2001:db8::1", "deny"],
  [["deny unix:"], "127.0.0.1", null],
  [[], "127.0.0.1", null],
];
for (const [rules, client, want] of MATCHES) {
  Deno.test(
    `AccessList.match() [${rules.join("; ")}] for ${client}: ${want}`,
    () => {
      const rule = list(...rules).match(client);
      strictEqual(rule === null ? null : rule.deny ? "deny" : "allow", want);
    },
  );
}
