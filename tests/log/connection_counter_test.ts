import { strictEqual } from "node:assert/strict";
import { ConnectionCounter } from "../../src/log/connection_counter.ts";

/** One step: at `at` ms, a request from `port` (or an upstream `take`). */
type Step = [at: number, port: number | "take", expected: number];

Deno.test("ConnectionCounter numbers connections as nginx does", async (t) => {
  const cases: [string, Step[]][] = [
    ["requests on one connection share a number", [
      [0, 50000, 1],
      [10, 50000, 1],
      [20, 50001, 2],
      [30, 50000, 1],
    ]],
    ["an upstream connect uses a number up", [
      [0, 50000, 1],
      [1, "take", 2],
      [2, 50001, 3],
      [3, 50000, 1],
    ]],
    ["a connection idle for idleMs is new again", [
      [0, 50000, 1],
      [74_999, 50000, 1],
      [149_998, 50000, 1], // seen at 74,999: still within 75 s
      [224_998, 50000, 2],
    ]],
    ["requests every half second keep the number far past idleMs", [
      ...Array.from(
        { length: 400 },
        (_, i): Step => [i * 500, 50000, 1],
      ),
      [200_000, 50001, 2],
    ]],
  ];
  for (const [name, steps] of cases) {
    await t.step(name, () => {
      let now = 0;
      const c = new ConnectionCounter({ now: () => now });
      for (const [at, port, expected] of steps) {
        now = at;
        const got = port === "take" ? c.take() : c.forPeer("127.0.0.1", port);
        strictEqual(got, expected, `${port} at ${at}`);
      }
    });
  }
});

Deno.test("ConnectionCounter stays within maxEntries, forgetting the longest idle", () => {
  let now = 0;
  const c = new ConnectionCounter({ maxEntries: 3, now: () => now });
  for (const port of [1, 2, 3]) c.forPeer("127.0.0.1", port);
  now = 2000; // past the one-second re-insert granularity
  strictEqual(c.forPeer("127.0.0.1", 1), 1); // 1 is now the most recent
  strictEqual(c.forPeer("127.0.0.1", 4), 4); // evicts 2, the longest idle
  strictEqual(c.size, 3);
  strictEqual(c.forPeer("127.0.0.1", 1), 1);
  strictEqual(c.forPeer("127.0.0.1", 3), 3);
  strictEqual(c.forPeer("127.0.0.1", 2), 5); // forgotten: a new number
  strictEqual(c.size, 3);
});

Deno.test("ConnectionCounter forgets expired entries as new ones arrive", () => {
  let now = 0;
  const c = new ConnectionCounter({ idleMs: 1000, now: () => now });
  for (let port = 1; port <= 100; port++) c.forPeer("127.0.0.1", port);
  strictEqual(c.size, 100);
  now = 5000;
  c.forPeer("127.0.0.1", 101);
  strictEqual(c.size, 1);
});

Deno.test("ConnectionCounter.clients counts client connections, not requests or upstream numbers", () => {
  let now = 0;
  const c = new ConnectionCounter({ now: () => now });
  c.forPeer("127.0.0.1", 50000);
  c.forPeer("127.0.0.1", 50000);
  c.take();
  c.forPeer("127.0.0.1", 50001);
  strictEqual(c.clients, 2);
  now = 80_000; // idle past 75 s: a new connection on the same port
  c.forPeer("127.0.0.1", 50000);
  strictEqual(c.clients, 3);
});

Deno.test("ConnectionCounter tells connections apart by address and port, and keeps the order and cap across addresses", async (t) => {
  /** At `at` ms, a request from `host`:`port`, expecting `number`. */
  type From = [at: number, host: string, port: number, expected: number];
  const cases: [string, From[], { maxEntries?: number; size: number }][] = [
    ["one port on two addresses is two connections", [
      [0, "10.0.0.1", 5000, 1],
      [1, "10.0.0.2", 5000, 2],
      [2, "10.0.0.1", 5000, 1],
      [3, "10.0.0.2", 5000, 2],
    ], { size: 2 }],
    ["addresses that alternate keep their numbers", [
      [0, "127.0.0.1", 1, 1],
      [0, "::1", 1, 2],
      [0, "127.0.0.1", 2, 3],
      [0, "::1", 1, 2],
      [0, "127.0.0.1", 1, 1],
    ], { size: 3 }],
    ["the cap forgets the longest idle whatever its address", [
      [0, "a", 1, 1],
      [0, "b", 1, 2],
      [2000, "a", 1, 1],
      [2000, "c", 1, 3], // evicts b:1
      [2000, "b", 1, 4], // evicts a:1
      [2000, "c", 1, 3],
      [2000, "a", 1, 5],
    ], { maxEntries: 2, size: 2 }],
    ["an address whose last connection was forgotten comes back", [
      [0, "a", 1, 1],
      [100_000, "b", 1, 2], // a:1 expired: forgotten with its address
      [100_001, "a", 1, 3],
      [100_002, "a", 1, 3],
      [100_003, "b", 1, 2],
    ], { size: 2 }],
  ];
  for (const [name, steps, { maxEntries, size }] of cases) {
    await t.step(name, () => {
      let now = 0;
      const c = new ConnectionCounter({
        now: () => now,
        ...(maxEntries === undefined ? {} : { maxEntries }),
      });
      for (const [at, host, port, expected] of steps) {
        now = at;
        strictEqual(
          c.forPeer(host, port),
          expected,
          `${host}:${port} at ${at}`,
        );
      }
      strictEqual(c.size, size);
    });
  }
});

Deno.test("ConnectionCounter.forPeer() takes the request's clock when given one", () => {
  const c = new ConnectionCounter({ now: () => 0, idleMs: 1000 });
  strictEqual(c.forPeer("127.0.0.1", 1, 0), 1);
  strictEqual(c.forPeer("127.0.0.1", 1, 999), 1);
  strictEqual(c.forPeer("127.0.0.1", 1, 2500), 2); // idle past 1 s by its clock
});
