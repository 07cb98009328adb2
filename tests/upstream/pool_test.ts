import { strictEqual } from "node:assert/strict";
import { Connection } from "../../src/upstream/connection.ts";
import {
  IdlePool,
  NON_IDEMPOTENT_IDLE_MS,
  RELEARN_MS,
} from "../../src/upstream/pool.ts";
import { loopbackPair, waitFor } from "../_utils.ts";

/** Closes connections and waits for their idle reads to settle (no leaked op). */
async function closeAll(...connections: Connection[]): Promise<void> {
  for (const c of connections) c.close();
  await Promise.all(connections.map((c) => c.idleRead));
}

const options = { maxIdle: 2, idleTimeoutMs: 60_000 };

Deno.test("IdlePool.take() returns the connection put back last, marked reused", async () => {
  await using one = await loopbackPair();
  await using two = await loopbackPair();
  const pool = new IdlePool(options);
  const a = new Connection(one.client);
  const b = new Connection(two.client);
  pool.put(a);
  pool.put(b);
  strictEqual(pool.size, 2);
  strictEqual(pool.take(), b);
  strictEqual(b.reused, true);
  strictEqual(pool.take(), a);
  strictEqual(pool.take(), null);
  pool.close();
  await closeAll(a, b);
});

Deno.test("IdlePool.put() closes what it must not keep", async (t) => {
  const cases: [string, (pool: IdlePool, c: Connection) => void][] = [
    ["pool closed", (pool) => pool.close()],
    ["connection closed", (_, c) => c.close()],
    ["pool full", () => {}],
  ];
  for (const [name, arrange] of cases) {
    await t.step(name, async () => {
      await using pair = await loopbackPair();
      const pool = new IdlePool({
        ...options,
        maxIdle: name === "pool full" ? 0 : 2,
      });
      const c = new Connection(pair.client);
      arrange(pool, c);
      pool.put(c);
      strictEqual(pool.size, 0);
      strictEqual(c.closed, true);
      pool.close();
      await closeAll(c);
    });
  }
});

Deno.test("IdlePool.put() on a full pool closes the oldest idle connection, so stale ones never keep a POST off a fresh one", async (t) => {
  // [pool size, idle connections put back before a lull]: each is then
  // too old for a risky take, and a fresh one comes back to a full pool.
  const cases: [number, number][] = [[1, 1], [2, 2], [3, 3], [3, 1]];
  for (const [maxIdle, stale] of cases) {
    await t.step(`keepalive ${maxIdle}, ${stale} stale`, async () => {
      let clock = 1_000_000;
      const pool = new IdlePool({ ...options, maxIdle, now: () => clock });
      const pairs = await Promise.all(
        Array.from({ length: stale + 1 }, () => loopbackPair()),
      );
      try {
        const old = pairs.slice(0, stale).map((p) => new Connection(p.client));
        for (const c of old) pool.put(c);
        clock += NON_IDEMPOTENT_IDLE_MS;
        strictEqual(pool.take(true), null, "a POST refuses the stale ones");
        const fresh = new Connection(pairs[stale]!.client);
        pool.put(fresh);
        strictEqual(fresh.closed, false, "the connection coming back is kept");
        const dropped = stale + 1 > maxIdle ? 1 : 0;
        strictEqual(old.filter((c) => c.closed).length, dropped);
        if (dropped === 1) strictEqual(old[0]!.closed, true, "the oldest goes");
        strictEqual(pool.size, stale + 1 - dropped);
        strictEqual(pool.take(true), fresh, "the next POST reuses it");
        pool.close();
        await closeAll(...old, fresh);
      } finally {
        for (const p of pairs) await p[Symbol.asyncDispose]();
      }
    });
  }
});

Deno.test("IdlePool drops a connection the upstream closes while it waits", async () => {
  await using pair = await loopbackPair();
  const pool = new IdlePool(options);
  const c = new Connection(pair.client);
  pool.put(c);
  pair.server.close();
  await waitFor(() => pool.size === 0, 2000);
  strictEqual(c.closed, true);
  strictEqual(await c.idleRead, null, "an exchange would see the EOF");
  pool.close();
});

Deno.test("IdlePool.take(risky) takes only a connection idle less than the bound, leaving older ones", async (t) => {
  // [ms idle, what a risky take gets]: the bound is NON_IDEMPOTENT_IDLE_MS.
  const cases: [number, boolean][] = [
    [0, true],
    [NON_IDEMPOTENT_IDLE_MS - 1, true],
    [NON_IDEMPOTENT_IDLE_MS, false],
    [NON_IDEMPOTENT_IDLE_MS * 60, false],
  ];
  for (const [idle, taken] of cases) {
    await t.step(`${idle} ms idle: ${taken ? "taken" : "left"}`, async () => {
      await using pair = await loopbackPair();
      let clock = 1_000_000;
      const pool = new IdlePool({ ...options, now: () => clock });
      const c = new Connection(pair.client);
      pool.put(c);
      clock += idle;
      strictEqual(pool.take(true), taken ? c : null);
      if (taken) strictEqual(c.idleMs, idle);
      // What a risky request leaves is there for the others.
      if (!taken) strictEqual(pool.take(), c);
      pool.close();
      await closeAll(c);
    });
  }
});

Deno.test("IdlePool learns the upstream's idle close: a risky take then needs half that", async () => {
  await using closing = await loopbackPair();
  await using kept = await loopbackPair();
  let clock = 0;
  const pool = new IdlePool({ ...options, now: () => clock });
  const a = new Connection(closing.client);
  pool.put(a);
  clock += 300;
  closing.server.close();
  await waitFor(() => pool.size === 0, 2000);
  strictEqual(pool.riskyIdleMs, 150);
  const b = new Connection(kept.client);
  pool.put(b);
  clock += 150;
  strictEqual(pool.take(true), null);
  clock -= 1;
  strictEqual(pool.take(true), b);
  // An exchange that met a close teaches the same.
  pool.closedAfter(40);
  strictEqual(pool.riskyIdleMs, 20);
  pool.closedAfter(1000);
  strictEqual(pool.riskyIdleMs, 20, "the bound only shrinks");
  pool.close();
  await closeAll(a, b);
});

Deno.test("IdlePool forgets a lesson RELEARN_MS after the last: an upstream restart does not keep POSTs off the pool for good", async () => {
  await using pair = await loopbackPair();
  let clock = 0;
  const pool = new IdlePool({ ...options, now: () => clock });
  // A restart closed a connection idle 4 ms: the bound drops to 2 ms.
  pool.closedAfter(4);
  clock += RELEARN_MS - 1;
  pool.closedAfter(8);
  strictEqual(pool.riskyIdleMs, 2, "a later lesson keeps the shorter bound");
  clock += RELEARN_MS - 1;
  strictEqual(pool.riskyIdleMs, 2, "still within RELEARN_MS of the last");
  clock += 1;
  strictEqual(pool.riskyIdleMs, NON_IDEMPOTENT_IDLE_MS);
  const c = new Connection(pair.client);
  pool.put(c);
  clock += 100;
  strictEqual(pool.take(true), c, "a POST takes a connection idle 100 ms");
  pool.close();
  await closeAll(c);
});
