import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  ClientQueue,
  MESSAGE_COST,
} from "../../src/proxy/websocket_client_queue.ts";

/** A stand-in for the browser's socket: what was sent, a settable backlog. */
function socket() {
  const sent: unknown[] = [];
  const fake = { bufferedAmount: 0, send: (m: unknown) => sent.push(m) };
  return { fake, sent, ws: fake as unknown as WebSocket };
}

Deno.test("ClientQueue.cost() counts messages the runtime may still hold, inferred from its written bytes", async (t) => {
  // Each case sends messages of these sizes, then the runtime reports
  // `buffered` payload bytes unwritten; the cost is what is left.
  const cases: {
    name: string;
    sizes: number[];
    buffered: number;
    messages: number;
  }[] = [
    { name: "all written", sizes: [3, 5, 1], buffered: 0, messages: 0 },
    { name: "the last unwritten", sizes: [3, 5, 1], buffered: 1, messages: 1 },
    {
      name: "the last two unwritten",
      sizes: [3, 5, 1],
      buffered: 6,
      messages: 2,
    },
    {
      name: "empty ones after the last written are not known written",
      sizes: [3, 0, 0],
      buffered: 0,
      messages: 2,
    },
    {
      name: "empty ones before a written message are",
      sizes: [0, 0, 3],
      buffered: 0,
      messages: 0,
    },
    {
      name: "empty ones around an unwritten message are not",
      sizes: [2, 0, 4, 0],
      buffered: 4,
      messages: 3,
    },
    {
      name: "a million empty messages, none known written",
      sizes: new Array(1_000_000).fill(0),
      buffered: 0,
      messages: 1_000_000,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const { fake, ws } = socket();
      const queue = new ClientQueue(ws);
      queue.open();
      for (const size of c.sizes) queue.send("x".repeat(size), size);
      fake.bufferedAmount = c.buffered;
      const bytes = c.buffered;
      strictEqual(queue.cost(), bytes + c.messages * MESSAGE_COST);
      strictEqual(queue.costBound() >= queue.cost(), true);
    });
  }
});

Deno.test("ClientQueue holds messages until the browser's side opens, at their cost, and sends them in order", () => {
  const { sent, ws } = socket();
  const queue = new ClientQueue(ws);
  queue.send("a", 1);
  queue.send(new Uint8Array(3), 3);
  queue.send("", 0);
  strictEqual(sent.length, 0);
  strictEqual(queue.cost(), 4 + 3 * MESSAGE_COST);
  queue.open();
  deepStrictEqual(sent, ["a", new Uint8Array(3), ""]);
  // Written at once (nothing buffered), but the empty one is last.
  strictEqual(queue.cost(), MESSAGE_COST);
  queue.clear();
  strictEqual(queue.cost(), 0);
});
