import { rejects, strictEqual } from "node:assert/strict";
import { ClientWatch, Connection } from "../../src/upstream/connection.ts";
import { Watchdog, WATCHDOG_MS } from "../../src/upstream/watchdog.ts";
import { loopbackPair } from "../_utils.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("Watchdog.arm() closes a connection whose read outlived its deadline", async () => {
  await using pair = await loopbackPair();
  const watchdog = new Watchdog();
  const c = new Connection(pair.client);
  watchdog.arm(c, 10);
  // Bounded even if the watchdog did nothing: then `expired` stays false.
  const guard = setTimeout(() => c.close(), 2000);
  await rejects(c.conn.read(new Uint8Array(8)));
  clearTimeout(guard);
  strictEqual(c.expired, true);
  // The watchdog closed it (the guard would leave `expired` false); how
  // soon is not asserted: a loaded machine runs timers late.
  strictEqual(c.closed, true);
  watchdog.stop();
});

Deno.test("Watchdog forgets an operation that finished in time", async () => {
  await using pair = await loopbackPair();
  const watchdog = new Watchdog();
  const c = new Connection(pair.client);
  watchdog.arm(c, 10);
  c.deadline = 0; // the read or write settled
  await sleep(3 * WATCHDOG_MS);
  strictEqual(c.expired, false);
  strictEqual(c.closed, false);
  watchdog.stop();
  c.close();
});

Deno.test("Watchdog.watch() reads a waiting call's signal after one period; unwatch() stops that", async () => {
  const watchdog = new Watchdog();
  const signal = new AbortController().signal;
  let readsA = 0;
  let readsB = 0;
  const a = new ClientWatch(() => (readsA++, signal), Date.now());
  const b = new ClientWatch(() => (readsB++, signal), Date.now());
  watchdog.watch(a);
  watchdog.watch(b);
  watchdog.unwatch(b);
  strictEqual(readsA, 0, "not before a period passed");
  await sleep(3 * WATCHDOG_MS);
  strictEqual(readsA, 1);
  strictEqual(readsB, 0);
  strictEqual(a.pending, false);
  watchdog.stop();
});
