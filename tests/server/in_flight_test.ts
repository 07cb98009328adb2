import { strictEqual } from "node:assert/strict";
import { InFlightRequests } from "../../src/server/in_flight.ts";

Deno.test("InFlightRequests.abandonAll() calls each open request once, even past a throw", () => {
  const inFlight = new InFlightRequests();
  const calls: string[] = [];
  const doneA = inFlight.add(() => calls.push("a"));
  inFlight.add(() => {
    throw new Error("cannot write");
  });
  inFlight.add(() => calls.push("c"));
  doneA();
  strictEqual(inFlight.size, 2);
  strictEqual(inFlight.abandonAll(), 2);
  strictEqual(calls.join(), "c");
  strictEqual(inFlight.abandonAll(), 0);
});
