/**
 * A request refused before any location is chosen (an invalid `Host`, a
 * target above the root, no `Host`, a field line nginx takes once sent
 * twice), beside nginx 1.22 with the server's `error_page 400` and
 * `add_header … always`: nginx answers it through both (its special
 * response runs with the server's own configuration), the gateway with its
 * own 400 page and neither (README, refusal-filters). Held here so the
 * difference shows where it closes; a refusal Deno's parser makes is its
 * empty 400 on both counts (request-line-parser).
 */
import { deepStrictEqual } from "node:assert/strict";
import { sideBySideAhead, startSideBySide } from "../access/_side_by_side.ts";

const FILES = { "e400.html": "custom 400\n", "index.html": "i\n" };
sideBySideAhead([FILES]);

/** [the request, the gateway's own 400 (true) or Deno's empty one] */
const ROWS: [string, boolean][] = [
  ["GET / HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n", true],
  ["GET /../x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", true],
  ["GET / HTTP/1.1\r\nConnection: close\r\n\r\n", true],
  [
    "GET / HTTP/1.1\r\nHost: t\r\nIf-None-Match: a\r\nIf-None-Match: b\r\nConnection: close\r\n\r\n",
    true,
  ],
  [
    "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab",
    false,
  ],
];

Deno.test("known difference refusal-filters: a request refused before its location gets nginx's status, not the server's error_page or add_header always", async () => {
  await using s = await startSideBySide({
    server:
      "root $HTML; add_header X-Added yes always; error_page 400 /e400.html; location / { }",
    files: FILES,
  });
  const got: unknown[] = [];
  const want: unknown[] = [];
  for (const [request, own] of ROWS) {
    const { ours, theirs } = await s.exchange(request, null);
    got.push([request, theirs.status, theirs.fields, theirs.body]);
    got.push([request, ours.status, ours.fields, ours.body.slice(0, 30)]);
    want.push([
      request,
      "HTTP/1.1 400",
      ["content-type: text/html", "x-added: yes"],
      "custom 400\n",
    ]);
    want.push(
      own
        ? [
          request,
          "HTTP/1.1 400",
          ["content-type: text/html"],
          "<html>\r\n<head><title>400 Bad R",
        ]
        : [request, "HTTP/1.1 400", [], ""],
    );
  }
  deepStrictEqual(got, want);
});
