/**
 * Requests Deno.serve's HTTP/1 parser refuses before any handler runs,
 * beside nginx 1.22 on the same configuration (README,
 * request-line-parser): nginx serves or answers them in its own words, the
 * gateway can only let the parser's empty 400 (or, for a bad chunk size
 * that arrives with the head, a close without an answer) go out, with
 * nothing logged. Held here so a Deno release that starts handing them over
 * shows.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

/** [what follows the request line, nginx's status, the gateway's] */
const ROWS: [string, string, string][] = [
  // A control byte in a field value: nginx keeps it.
  ["X: a\x01b\r\n\r\n", "HTTP/1.1 200", "HTTP/1.1 400"],
  ["X: a\x7fb\r\n\r\n", "HTTP/1.1 200", "HTTP/1.1 400"],
  // A coding nginx does not know beside chunked: 501.
  [
    "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    "HTTP/1.1 501",
    "HTTP/1.1 400",
  ],
  // A bad chunk size in the same write as the head: nginx's 400.
  [
    "Transfer-Encoding: chunked\r\n\r\nZZ\r\nab\r\n0\r\n\r\n",
    "HTTP/1.1 400",
    "",
  ],
];

Deno.test("what Deno's parser refuses gets its answer and no line, where nginx serves or answers in its words", async () => {
  await using s = await startSideBySide({
    server: "location / { return 200 ok; }",
  });
  const got: unknown[] = [];
  const want: unknown[] = [];
  for (const [rest, nginx, gateway] of ROWS) {
    const { ours, theirs } = await s.exchange(
      `POST /?a=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n${rest}`,
      null,
    );
    got.push([rest, theirs.status, ours.status, ours.errors, ours.access]);
    want.push([rest, nginx, gateway, [], []]);
  }
  deepStrictEqual(got, want);
});
