import {
  deepStrictEqual,
  notStrictEqual,
  strictEqual,
} from "node:assert/strict";
import {
  DIRECT_GROUPS,
  serverSpec,
  UpstreamRegistry,
} from "../../src/proxy/upstream_registry.ts";

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
    // As written: what `hash … consistent` hashes.
    server: "10.0.0.5:8080",
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

Deno.test("UpstreamRegistry.direct() shares one group, and its client, per address", () => {
  const registry = new UpstreamRegistry(new Map());
  try {
    const first = registry.direct("127.0.0.1", 8080);
    const again = registry.direct("127.0.0.1", 8080);
    // The same client: its pool, watchdog timer and GC pacer, not new ones.
    strictEqual(again, first);
    strictEqual(again.peers[0]!.client, first.peers[0]!.client);
    strictEqual(first.peers[0]!.spec.address.peer, "127.0.0.1:8080");
    notStrictEqual(registry.direct("127.0.0.1", 8081), first);
    const v6 = registry.direct("[::1]", 80);
    strictEqual(v6.peers[0]!.spec.address.hostname, "::1");
    strictEqual(registry.direct("[::1]", 80), v6);
    strictEqual(registry.directCount, 3);
  } finally {
    registry.close();
  }
});

Deno.test("UpstreamRegistry.direct() keeps at most DIRECT_GROUPS, the least recently used let go", () => {
  const registry = new UpstreamRegistry(new Map());
  try {
    // Addresses a client could choose through a variable: more than kept.
    const address = (i: number) => `10.0.${i >> 8}.${i & 0xff}`;
    const first = registry.direct(address(0), 80);
    const second = registry.direct(address(1), 80);
    for (let i = 2; i < DIRECT_GROUPS; i++) registry.direct(address(i), 80);
    strictEqual(registry.directCount, DIRECT_GROUPS);
    // Used again, the first is now the most recent: the second goes next.
    strictEqual(registry.direct(address(0), 80), first);
    for (let i = DIRECT_GROUPS; i < DIRECT_GROUPS * 3; i++) {
      registry.direct(address(i), 80);
      strictEqual(registry.directCount, DIRECT_GROUPS);
    }
    notStrictEqual(registry.direct(address(1), 80), second);
    notStrictEqual(registry.direct(address(0), 80), first);
    strictEqual(registry.directCount, DIRECT_GROUPS);
  } finally {
    registry.close();
  }
});

Deno.test("UpstreamRegistry.get() finds a group's name in any case, as ngx_http_upstream_init_request does", () => {
  const server = {
    address: "127.0.0.1:8080",
    hostname: "127.0.0.1",
    port: 8080,
    weight: 1,
    maxFails: 1,
    failTimeoutMs: 10_000,
    backup: false,
    down: false,
  };
  const registry = new UpstreamRegistry(
    new Map([["Backend", {
      name: "Backend",
      servers: [server],
      keepalive: 0,
      explicit: true,
    }]]),
  );
  try {
    const group = registry.get("Backend");
    strictEqual(group?.name, "Backend");
    for (const name of ["backend", "BACKEND", "bAcKeNd"]) {
      strictEqual(registry.get(name), group, name);
    }
    strictEqual(registry.get("backend2"), undefined);
  } finally {
    registry.close();
  }
});
