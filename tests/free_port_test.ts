/**
 * The test helpers' ports: a start on a port drawn before the bind is done
 * again on another port when the port was taken meanwhile (onFreePort()).
 */
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { freePort, onFreePort, portTaken } from "./_utils.ts";

Deno.test("portTaken() reads EADDRINUSE in the error or its causes", () => {
  const cases: [unknown, boolean][] = [
    [new Deno.errors.AddrInUse("x"), true],
    [
      new Error(
        "nginx did not start: bind() to 127.0.0.1:1 failed (98: Address already in use)",
      ),
      true,
    ],
    [
      new Error("gateway did not start", {
        cause: new Deno.errors.AddrInUse("x"),
      }),
      true,
    ],
    [new Error("nginx did not start: unknown directive"), false],
    [new Deno.errors.ConnectionRefused("x"), false],
    ["Address already in use", false],
    [undefined, false],
  ];
  for (const [error, taken] of cases) {
    strictEqual(portTaken(error), taken, String(error));
  }
});

Deno.test("onFreePort() starts again on a new port when the port was taken", async () => {
  const tried: number[] = [];
  const port = await onFreePort((p) => {
    tried.push(p);
    if (tried.length < 3) {
      // What a server that lost the race reports.
      return Promise.reject(
        new Error("bind() failed (98: Address already in use)"),
      );
    }
    return Promise.resolve(p);
  });
  strictEqual(tried.length, 3);
  strictEqual(port, tried[2]);
});

Deno.test("onFreePort() gives up after five ports, and never retries another failure", async () => {
  let starts = 0;
  await rejects(
    onFreePort(() => {
      starts++;
      return Promise.reject(new Deno.errors.AddrInUse("taken"));
    }),
    Deno.errors.AddrInUse,
  );
  strictEqual(starts, 5);
  const seen: string[] = [];
  await rejects(
    onFreePort(() => {
      seen.push("start");
      return Promise.reject(new Error("unknown directive"));
    }),
    /unknown directive/,
  );
  deepStrictEqual(seen, ["start"]);
});

Deno.test("freePort() draws from its shard's own share of the range, so shards of one run never share a port", async (t) => {
  const place = globalThis as {
    stationGatewayShard?: { index: number; count: number };
  };
  const before = place.stationGatewayShard;
  // [shard, shards, the share]
  const table: [number, number, number, number][] = [
    [0, 12, 20_000, 20_833],
    [3, 12, 22_499, 23_332],
    [11, 12, 29_163, 29_996],
    [0, 1, 20_000, 30_000],
  ];
  try {
    for (const [index, count, from, to] of table) {
      await t.step(`${index} of ${count}`, () => {
        place.stationGatewayShard = { index, count };
        for (let i = 0; i < 20; i++) {
          const port = freePort();
          ok(port >= from && port < to, `${port} in [${from}, ${to})`);
        }
      });
    }
  } finally {
    if (before === undefined) delete place.stationGatewayShard;
    else place.stationGatewayShard = before;
  }
});

Deno.test("freePort() hands out no port twice among its last draws, even from a narrow share", () => {
  const place = globalThis as {
    stationGatewayShard?: { index: number; count: number };
  };
  const before = place.stationGatewayShard;
  // A share of 100 ports: 50 draws without the memory would meet a repeat
  // almost surely (a test drawing two ports then binds one twice).
  place.stationGatewayShard = { index: 0, count: 100 };
  try {
    const ports = Array.from({ length: 50 }, () => freePort());
    strictEqual(new Set(ports).size, ports.length);
  } finally {
    if (before === undefined) delete place.stationGatewayShard;
    else place.stationGatewayShard = before;
  }
});
