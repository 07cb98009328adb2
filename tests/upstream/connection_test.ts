import { strictEqual } from "node:assert/strict";
import { ClientWatch, Connection } from "../../src/upstream/connection.ts";
import { loopbackPair } from "../_utils.ts";

Deno.test("ClientWatch reads a lazy signal only on attach()", () => {
  const controller = new AbortController();
  let reads = 0;
  const watch = new ClientWatch(() => {
    reads++;
    return controller.signal;
  }, 0);
  strictEqual(watch.pending, true);
  controller.abort();
  strictEqual(watch.aborted, false, "not read yet");
  watch.attach();
  watch.attach();
  strictEqual(reads, 1);
  strictEqual(watch.pending, false);
  strictEqual(watch.aborted, true);
});

Deno.test("ClientWatch stops the current phase when the client leaves, not after detach()", async (t) => {
  const cases: [string, boolean, number][] = [
    ["watched", false, 1],
    ["detached first", true, 0],
  ];
  for (const [name, detach, expected] of cases) {
    await t.step(name, () => {
      const controller = new AbortController();
      const watch = new ClientWatch(controller.signal, 0);
      let stops = 0;
      watch.onAbort = () => stops++;
      if (detach) watch.detach();
      controller.abort();
      strictEqual(stops, expected);
    });
  }
});

Deno.test("ClientWatch stops the current phase when the lazy signal it reads is already aborted", () => {
  // A client gone in the first watchdog period: its abort event fired
  // before attach() listened.
  const controller = new AbortController();
  const watch = new ClientWatch(() => controller.signal, 0);
  let stops = 0;
  watch.onAbort = () => stops++;
  controller.abort();
  watch.attach();
  strictEqual(stops, 1);
});

Deno.test("Connection.close() closes its socket once", async () => {
  await using pair = await loopbackPair();
  const c = new Connection(pair.client);
  c.close();
  c.close();
  strictEqual(c.closed, true);
  strictEqual(await pair.server.read(new Uint8Array(8)), null, "peer sees EOF");
});
