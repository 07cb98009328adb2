import { strictEqual } from "node:assert/strict";
import { Connection } from "../../src/upstream/connection.ts";
import { IdlePool } from "../../src/upstream/pool.ts";
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
    ["bytes left over", (_, c) => c.pending = new Uint8Array(1)],
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
