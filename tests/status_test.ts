import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { GatewayStats, isLoopback, statusDocument } from "../src/status.ts";
import { createUpstreamGroup } from "../src/upstream/group.ts";
import { parseUpstreamServer } from "../src/config/addresses.ts";
import { refusedPort, startGateway } from "./_utils.ts";

Deno.test("GatewayStats.answered() counts each status in its class", async (t) => {
  const cases: [number, string | null][] = [
    [99, null],
    [100, "1xx"],
    [101, "1xx"],
    [200, "2xx"],
    [299, "2xx"],
    [304, "3xx"],
    [404, "4xx"],
    [499, "4xx"],
    [500, "5xx"],
    [599, "5xx"],
    [600, null],
  ];
  for (const [status, cls] of cases) {
    await t.step(String(status), () => {
      const stats = new GatewayStats();
      stats.answered(status);
      const counted = Object.entries(stats.byStatus).filter(([, n]) => n > 0);
      deepStrictEqual(counted, cls === null ? [] : [[cls, 1]]);
    });
  }
});

Deno.test("isLoopback() accepts 127/8 and ::1 only", async (t) => {
  const cases: [string, boolean][] = [
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["10.0.0.1", false],
    ["128.0.0.1", false],
    ["::2", false],
  ];
  for (const [address, expected] of cases) {
    await t.step(address, () => strictEqual(isLoopback(address), expected));
  }
});

Deno.test("statusDocument() reports uptime, counters and memory", () => {
  const group = createUpstreamGroup(
    "backend",
    [parseUpstreamServer("http://127.0.0.1:8080")],
    { timeouts: { connectMs: 1, sendMs: 1, readMs: 1 }, upstreamKeepalive: 0 },
  );
  const stats = new GatewayStats();
  stats.requests = 3;
  stats.answered(502);
  stats.failed("refused");
  const doc = statusDocument({
    version: "1.2.3",
    stats,
    group,
    connections: 2,
    staticCacheBytes: 10,
    memory: { rss: 50, heapTotal: 40, heapUsed: 30, external: 20 },
  }, stats.started + 61_500) as Record<string, unknown>;
  group.close();
  deepStrictEqual(doc, {
    version: "1.2.3",
    uptimeSeconds: 61,
    connections: 2,
    requests: {
      total: 3,
      inFlight: 0,
      byStatus: { "1xx": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 1 },
    },
    upstream: {
      group: "backend",
      failures: { refused: 1 },
      servers: [{
        server: "127.0.0.1:8080",
        backup: false,
        available: true,
        fails: 0,
        idleConnections: 0,
      }],
    },
    staticCacheBytes: 10,
    memory: {
      rssBytes: 50,
      heapUsedBytes: 30,
      heapTotalBytes: 40,
      externalBytes: 20,
    },
  });
});

Deno.test("statusDocument() says which servers are skipped for fail_timeout", () => {
  const group = createUpstreamGroup(
    "backend",
    ["http://127.0.0.1:9001", "http://127.0.0.1:9002 max_fails=2"].map(
      parseUpstreamServer,
    ),
    { timeouts: { connectMs: 1, sendMs: 1, readMs: 1 }, upstreamKeepalive: 0 },
  );
  const [a, b] = group.peers;
  group.failed(a!);
  group.failed(b!);
  const servers = (now: number) =>
    (statusDocument({
      version: "1",
      stats: new GatewayStats(),
      group,
      connections: 0,
      staticCacheBytes: 0,
      memory: { rss: 0, heapTotal: 0, heapUsed: 0, external: 0 },
    }, now) as { upstream: { servers: Record<string, unknown>[] } }).upstream
      .servers.map((s) => `${s.server} ${s.available} ${s.fails}`);
  group.close();
  deepStrictEqual(servers(Date.now()), [
    "127.0.0.1:9001 false 1",
    "127.0.0.1:9002 true 1",
  ]);
  // fail_timeout (10 s) over: available again, failures kept until a check.
  deepStrictEqual(servers(Date.now() + 12_000), [
    "127.0.0.1:9001 true 1",
    "127.0.0.1:9002 true 1",
  ]);
});

Deno.test("the status endpoint counts a refused upstream's failure, as the proxy meets it", async () => {
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
    statusPath: "/station-status",
  });
  const failed = await fetch(`${gw.url}/api/loginms`, {
    method: "POST",
    body: "{}",
  });
  await failed.body?.cancel();
  strictEqual(failed.status, 502);
  const doc = await (await fetch(`${gw.url}/station-status`)).json();
  deepStrictEqual(doc.upstream.failures, { refused: 1 });
});
