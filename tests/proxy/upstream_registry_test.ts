import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { serverSpec } from "../../src/proxy/upstream_registry.ts";

Deno.test("serverSpec() maps an upstream server's settings, IPv6 in brackets", () => {
  const base = {
    weight: 3,
    maxFails: 2,
    failTimeoutMs: 5000,
    backup: true,
    down: false,
  };
  const v4 = serverSpec({
    ...base,
    address: "10.0.0.5:8080",
    hostname: "10.0.0.5",
    port: 8080,
  });
  deepStrictEqual(v4, {
    address: {
      hostname: "10.0.0.5",
      port: 8080,
      origin: "http://10.0.0.5:8080",
      peer: "10.0.0.5:8080",
    },
    backup: true,
    maxFails: 2,
    failTimeoutMs: 5000,
    weight: 3,
    down: false,
  });
  const v6 = serverSpec({
    ...base,
    address: "[::1]:80",
    hostname: "::1",
    port: 80,
  });
  strictEqual(v6.address.hostname, "::1");
  strictEqual(v6.address.peer, "[::1]:80");
  strictEqual(v6.address.origin, "http://[::1]");
});
