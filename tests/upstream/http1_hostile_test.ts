/**
 * Response heads a hostile upstream may send: one that arrives a few bytes
 * per read is searched for its end once, the search resuming where the
 * last one stopped (src/upstream/client.ts keeps the count), wherever the
 * empty line is split.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseResponseHead } from "../../src/upstream/http1.ts";

function head(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

Deno.test("parseResponseHead() resumes the search where an earlier call stopped, wherever the end is split", () => {
  const heads = [
    "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\nbody",
    "HTTP/1.1 200 OK\nA: 1\n\nbody",
    "HTTP/1.1 204\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
  ];
  for (const text of heads) {
    const bytes = head(text);
    const whole = parseResponseHead(bytes)!;
    for (let cut = 1; cut < whole.headLength; cut++) {
      // What the client loop does: a call on the bytes so far finds no
      // end, the next resumes after them.
      strictEqual(parseResponseHead(bytes.subarray(0, cut)), null);
      deepStrictEqual(
        parseResponseHead(bytes, undefined, cut),
        whole,
        `${JSON.stringify(text)} cut at ${cut}`,
      );
    }
  }
});
