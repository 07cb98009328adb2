import { strictEqual } from "node:assert/strict";
import { formatIpv6, hostAddress, parseIpv6 } from "../../src/access/mod.ts";

Deno.test("hostAddress() takes an address as ngx_parse_url does and prints it as ngx_sock_ntop", async (t) => {
  const table: [string, string | null][] = [
    ["127.0.0.1", "127.0.0.1"],
    // ngx_inet_addr: decimal octets, leading zeros and all; an empty one
    // is 0; exactly three dots; INADDR_NONE is its error value.
    ["127.000.000.001", "127.0.0.1"],
    ["127.0.0.010", "127.0.0.10"],
    ["127.0..1", "127.0.0.1"],
    ["...", "0.0.0.0"],
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.254", "255.255.255.254"],
    ["255.255.255.255", null],
    ["127.1", null],
    ["0x7f.0.0.1", null],
    ["127.0.0.256", null],
    ["1.2.3.4.5", null],
    ["1.2.3.4 ", null],
    ["", null],
    ["localhost", null],
    // ngx_inet6_addr inside brackets: no zone, no spaces, one `::`.
    ["[::1]", "[::1]"],
    ["[0:0:0:0:0:0:0:1]", "[::1]"],
    ["[::]", "[::]"],
    ["[::ffff:1.2.3.4]", "[::ffff:1.2.3.4]"],
    ["[::FFFF:001.002.003.004]", "[::ffff:1.2.3.4]"],
    ["[::ffff:7f00:1]", "[::ffff:127.0.0.1]"],
    ["[2001:DB8::0:1]", "[2001:db8::1]"],
    ["[fe80::1%eth0]", null],
    ["[fe80::1%25lo]", null],
    ["[1::2::3]", null],
    ["[::g]", null],
    ["[1:2:3:4:5:6:7:8:9]", null],
    ["[]", null],
    ["::1", null],
  ];
  for (const [host, expected] of table) {
    await t.step(JSON.stringify(host), () => {
      strictEqual(hostAddress(host), expected);
    });
  }
});

Deno.test("formatIpv6() prints an address as ngx_inet6_ntop does", async (t) => {
  const table: [string, string][] = [
    ["0:0:0:0:0:0:0:0", "::"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["0:0:0:0:0:0:0:2", "::2"],
    // An IPv4-compatible or -mapped address ends dotted.
    ["0:0:0:0:0:0:102:304", "::1.2.3.4"],
    ["0:0:0:0:0:ffff:102:304", "::ffff:1.2.3.4"],
    ["1:0:0:0:0:0:0:0", "1::"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["1:0:0:2:0:0:3:4", "1::2:0:0:3:4"],
    // A single zero group is not compressed.
    ["1:0:1:0:1:0:1:0", "1:0:1:0:1:0:1:0"],
    ["2001:DB8:0:0:0:0:0:FF", "2001:db8::ff"],
  ];
  for (const [text, expected] of table) {
    await t.step(text, () => {
      strictEqual(formatIpv6(parseIpv6(text)!), expected);
    });
  }
});
