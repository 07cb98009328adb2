/**
 * A request refused before any location is chosen (an invalid `Host`, a
 * target above the root, no `Host`, a field line nginx takes once sent
 * twice), beside nginx 1.22: nginx's special response runs with the
 * server's own configuration, so its `add_header … always` fields go out,
 * as the gateway's (`EngineRoute.answerRefusal`), and its `error_page 400`
 * answers, which the gateway does not follow (README, refusal-error-page:
 * its page keeps the request's body and fields from the upstream, and a
 * `Host` no URL takes). A refusal Deno's parser makes is its empty 400 on
 * both counts (README, request-line-parser).
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

Deno.test("a request refused before its location gets the server's add_header always, as nginx 1.22", async () => {
  await using s = await startSideBySide({
    server: "root $HTML; add_header X-Added yes always; location / { }",
    files: FILES,
  });
  const got: unknown[] = [];
  const want: unknown[] = [];
  for (const [request, deno] of ROWS) {
    const { ours, theirs } = await s.exchange(request, deno ? null : undefined);
    got.push([request, ours.status, ours.fields, ours.body, ours.access]);
    want.push(
      deno
        ? [request, theirs.status, [], "", []]
        : [request, theirs.status, theirs.fields, theirs.body, theirs.access],
    );
  }
  deepStrictEqual(got, want);
});

Deno.test("known difference refusal-error-page: the server's error_page 400 is not followed for a request refused before its location", async () => {
  await using s = await startSideBySide({
    server:
      "root $HTML; add_header X-Added yes always; error_page 400 /e400.html; location / { }",
    files: FILES,
  });
  const rows: string[] = [
    ...ROWS.filter(([, deno]) => !deno).map(([request]) => request),
    // A Host no URL takes (the page's request could not be made from it).
    "GET /x HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n",
  ];
  const got: unknown[] = [];
  const want: unknown[] = [];
  for (const request of rows) {
    const { ours, theirs } = await s.exchange(request);
    got.push([request, theirs.body, ours.status, ours.fields, ours.errors]);
    want.push([
      request,
      request.startsWith("HEAD") ? "" : "custom 400\n",
      "HTTP/1.1 400",
      ["content-type: text/html", "x-added: yes"],
      ours.errors.filter((l) => !/\[alert\]/.test(l)),
    ]);
    deepStrictEqual(
      ours.body.slice(0, 30),
      request.startsWith("HEAD") ? "" : "<html>\r\n<head><title>400 Bad R",
    );
  }
  deepStrictEqual(got, want);
});
