/** Listen and upstream addresses as the flags write them. */
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  parseListen,
  parseUpstream,
  parseUpstreamServer,
} from "../../src/config/addresses.ts";

Deno.test("parseUpstream() accepts http URLs with a host, 8080 by default", async (t) => {
  const cases: [string, string, string][] = [
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080", "127.0.0.1:8080"],
    ["http://127.0.0.1", "http://127.0.0.1:8080", "127.0.0.1:8080"],
    ["http://10.1.2.3:9000/", "http://10.1.2.3:9000", "10.1.2.3:9000"],
    ["HTTP://Station-PC:80", "http://station-pc", "station-pc:80"],
    ["http://[::1]:8080", "http://[::1]:8080", "[::1]:8080"],
    // An address as nginx reads it, not as the system's resolver (octal).
    ["http://127.0.0.010:80", "http://127.0.0.10", "127.0.0.10:80"],
    ["http://[0:0::1]:8080", "http://[::1]:8080", "[::1]:8080"],
  ];
  for (const [input, origin, peer] of cases) {
    await t.step(input, () => {
      const u = parseUpstream(input);
      strictEqual(u.origin, origin);
      strictEqual(u.peer, peer);
    });
  }
  for (
    const bad of [
      "https://x",
      "http://",
      "x:8080",
      "http://a/b",
      "http://a?b",
      "http://u@a",
      "http://a:0",
      "http://a:70000",
      "ftp://a",
      "",
    ]
  ) {
    throws(
      () => parseUpstream(bad),
      new RegExp(`Cannot parse upstream "${bad.replace(/[?/]/g, "\\$&")}"`),
    );
  }
});

Deno.test("parseListen() reads [host:]port and keeps a bare port on loopback", () => {
  deepStrictEqual(parseListen("8081"), { hostname: "localhost", port: 8081 });
  deepStrictEqual(parseListen("127.0.0.1:0"), {
    hostname: "127.0.0.1",
    port: 0,
  });
  deepStrictEqual(parseListen("[::1]:8081"), { hostname: "::1", port: 8081 });
  deepStrictEqual(parseListen("0.0.0.0:80"), { hostname: "0.0.0.0", port: 80 });
  // An address as nginx reads it, not as the system's resolver (octal).
  deepStrictEqual(parseListen("127.0.0.010:80"), {
    hostname: "127.0.0.10",
    port: 80,
  });
  deepStrictEqual(parseListen("[0:0::1]:80"), { hostname: "::1", port: 80 });
  throws(() => parseListen("65536"), RangeError);
  throws(() => parseListen("host:"), TypeError);
});

Deno.test("parseUpstreamServer() reads nginx's server parameters", () => {
  const s = parseUpstreamServer(
    "http://10.0.0.5:9000 max_fails=3 fail_timeout=30s",
  );
  deepStrictEqual(
    {
      peer: s.address.peer,
      backup: s.backup,
      maxFails: s.maxFails,
      failTimeoutMs: s.failTimeoutMs,
    },
    { peer: "10.0.0.5:9000", backup: false, maxFails: 3, failTimeoutMs: 30000 },
  );
  strictEqual(parseUpstreamServer("http://127.0.0.1 backup").backup, true);
  throws(
    () => parseUpstreamServer("http://a weight=2"),
    /unknown parameter "weight=2"/,
  );
  throws(
    () => parseUpstreamServer("http://a fail_timeout=x"),
    /Cannot parse fail_timeout "x"/,
  );
});

Deno.test("parseUpstreamServer() refuses numbers it cannot hold exactly, naming them as given", () => {
  throws(
    () => parseUpstreamServer("http://a max_fails=99999999999999999999"),
    /unknown parameter "max_fails=99999999999999999999"/,
  );
  throws(
    () => parseUpstreamServer("http://a fail_timeout=2147484s"),
    /Cannot parse fail_timeout "2147484s": must be at most 2147483647ms/,
  );
});
