import { strictEqual } from "node:assert/strict";
import {
  DISCARD_WANTS,
  discardedLength,
} from "../../src/request/discarded_body.ts";

// [what the body does, the stream, the length nginx has for it]
const CASES: [string, () => ReadableStream<Uint8Array> | null, number][] = [
  ["none", () => null, 0],
  ["ends", () => new Blob(["ab", "cde"]).stream(), 0],
  ["ends empty", () => new Blob([]).stream(), 0],
  [
    "fails after a piece (its client left)",
    () =>
      new ReadableStream({
        pull(c) {
          c.enqueue(new Uint8Array(3));
          c.error(new Deno.errors.BadResource("gone"));
        },
      }),
    DISCARD_WANTS,
  ],
];
for (const [what, stream, want] of CASES) {
  Deno.test(`discardedLength() of a body that ${what} is ${want}`, async () => {
    strictEqual(await discardedLength(stream()), want);
  });
}
