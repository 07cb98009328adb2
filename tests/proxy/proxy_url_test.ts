import { deepStrictEqual } from "node:assert/strict";
import {
  groupOf,
  parseProxyUrl,
  type ProxyUrl,
} from "../../src/proxy/proxy_url.ts";
import { UpstreamRegistry } from "../../src/proxy/upstream_registry.ts";

Deno.test("parseProxyUrl() reads an evaluated proxy_pass as ngx_http_proxy_eval and ngx_parse_url", () => {
  const ok = (
    host: string,
    port: number,
    noPort: boolean,
    uri: string,
  ): ProxyUrl => ({
    ok: true,
    host,
    port,
    noPort,
    uri,
  });
  const fail = (message: string): ProxyUrl => ({ ok: false, message });
  const table: [string, ProxyUrl][] = [
    ["http://10.0.0.5:8080", ok("10.0.0.5", 8080, false, "")],
    ["HTTP://backend", ok("backend", 80, true, "")],
    ["http://backend/v1/x?y=1", ok("backend", 80, true, "/v1/x?y=1")],
    // A query right after the host becomes "/?…".
    ["http://10.0.0.5:8080?x=1", ok("10.0.0.5", 8080, false, "/?x=1")],
    ["http://[::1]:9000/a", ok("[::1]", 9000, false, "/a")],
    ["http://[::1]", ok("[::1]", 80, true, "")],
    ["http://a:8080/b:c", ok("a", 8080, false, "/b:c")],
    ["http://", fail('invalid URL prefix in "http://"')],
    ["https://10.0.0.5", fail('invalid URL prefix in "https://10.0.0.5"')],
    ["10.0.0.5:8080", fail('invalid URL prefix in "10.0.0.5:8080"')],
    ["http://a:0", fail('invalid port in upstream "a:0"')],
    ["http://a:65536", fail('invalid port in upstream "a:65536"')],
    ["http://a:b:80", fail('invalid port in upstream "a:b:80"')],
    ["http://a:/x", fail('invalid port in upstream "a:/x"')],
    ["http:///x", fail('no host in upstream "/x"')],
    ["http://[::1", fail('invalid host in upstream "[::1"')],
    // ngx_parse_inet6_url: a `/` ends the host, a `?` does not; the host
    // must be an address (ngx_inet6_addr: no zone).
    ["http://[::1]?x=1", fail('invalid host in upstream "[::1]?x=1"')],
    ["http://[::1]x", fail('invalid host in upstream "[::1]x"')],
    ["http://[::1]:", fail('invalid port in upstream "[::1]:"')],
    ["http://[::1]:80?x", fail('invalid port in upstream "[::1]:80?x"')],
    ["http://[]:80", fail('no host in upstream "[]:80"')],
    [
      "http://[fe80::1%eth0]",
      fail('invalid IPv6 address in upstream "[fe80::1%eth0]"'),
    ],
    ["http://[::g]/", fail('invalid IPv6 address in upstream "[::g]/"')],
    ["http://[::ffff:1.2.3.4]", ok("[::ffff:1.2.3.4]", 80, true, "")],
    ["http://a:0080/", ok("a", 80, false, "/")],
  ];
  for (const [url, expected] of table) {
    deepStrictEqual(parseProxyUrl(url), expected, url);
  }
});

Deno.test("groupOf() tells an address as ngx_parse_url does, and connects to it as nginx prints it", () => {
  const registry = new UpstreamRegistry(new Map());
  try {
    // The host as a variable gave it → the server connected to, or the line.
    const table: [string, string][] = [
      ["127.0.0.1", "127.0.0.1:80"],
      // ngx_inet_addr: decimal octets, leading zeros and all; an empty
      // octet is 0; exactly three dots.
      ["127.000.000.001", "127.0.0.1:80"],
      ["010.0.0.1", "10.0.0.1:80"],
      ["127.0..1", "127.0.0.1:80"],
      ["0.0.0.0", "0.0.0.0:80"],
      ["127.1", "no resolver defined to resolve 127.1"],
      ["0x7f.0.0.1", "no resolver defined to resolve 0x7f.0.0.1"],
      ["127.0.0.256", "no resolver defined to resolve 127.0.0.256"],
      ["1.2.3.4.5", "no resolver defined to resolve 1.2.3.4.5"],
      // INADDR_NONE is nginx's error value: a name.
      ["255.255.255.255", "no resolver defined to resolve 255.255.255.255"],
      ["localhost", "no resolver defined to resolve localhost"],
      // ngx_inet6_addr, printed by ngx_inet6_ntop.
      ["[::1]", "[::1]:80"],
      ["[0:0:0:0:0:0:0:1]", "[::1]:80"],
      ["[::FFFF:1.2.3.4]", "[::ffff:1.2.3.4]:80"],
      ["[::ffff:001.002.003.004]", "[::ffff:1.2.3.4]:80"],
      ["[::ffff:7f00:1]", "[::ffff:127.0.0.1]:80"],
      ["[2001:DB8::0:1]", "[2001:db8::1]:80"],
      ["[1:0:0:2:0:0:0:3]", "[1:0:0:2::3]:80"],
    ];
    for (const [host, expected] of table) {
      const found = groupOf(
        { ok: true, host, port: 80, noPort: false, uri: "" },
        registry,
      );
      const got = "group" in found
        ? found.group.peers[0]!.spec.address.peer
        : found.message;
      deepStrictEqual(got, expected, host);
    }
  } finally {
    registry.close();
  }
});
