/**
 * A request refused before any location is chosen (an invalid `Host`, a
 * target above the root, no `Host`, a field line nginx takes once sent
 * twice), beside nginx 1.22: nginx's special response runs with the
 * server's own configuration, so the server's `error_page 400` answers it
 * (an internal redirect through its locations) and its `add_header …
 * always` fields go out; the gateway does the same (`answerRefused`). A
 * refusal Deno's parser makes is its empty 400 on both counts
 * (README, request-line-parser).
 */
import { deepStrictEqual } from "node:assert/strict";
import { sideBySideAhead, startSideBySide } from "../access/_side_by_side.ts";

const FILES = { "e400.html": "custom 400\n", "index.html": "i\n" };
sideBySideAhead([FILES, FILES]);

/** [the request, refused by Deno's parser before the gateway sees it] */
const ROWS: [string, boolean][] = [
  ["GET / HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n", false],
  ["GET /../x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", false],
  ["HEAD /../x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", false],
  ["GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false],
  [
    "GET / HTTP/1.1\r\nHost: t\r\nIf-None-Match: a\r\nIf-None-Match: b\r\nConnection: close\r\n\r\n",
    false,
  ],
  [
    "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab",
    true,
  ],
];

for (
  const [name, server] of [
    [
      "error_page 400 and add_header always",
      "root $HTML; add_header X-Added yes always; error_page 400 /e400.html; location / { }",
    ],
    [
      "add_header always alone",
      "root $HTML; add_header X-Added yes always; location / { }",
    ],
  ]
) {
  Deno.test(`a request refused before its location gets the server's ${name}, as nginx 1.22`, async () => {
    await using s = await startSideBySide({ server: server!, files: FILES });
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (const [request, deno] of ROWS) {
      const { ours, theirs } = await s.exchange(
        request,
        deno ? null : undefined,
      );
      got.push([request, ours.status, ours.fields, ours.body, ours.access]);
      want.push(
        deno
          ? [request, theirs.status, [], "", []]
          : [request, theirs.status, theirs.fields, theirs.body, theirs.access],
      );
    }
    deepStrictEqual(got, want);
  });
}
