/**
 * A field nginx 1.22 takes once only (`ngx_http_process_unique_header_line`)
 * sent on two lines is its 400 and `client sent duplicate header line`,
 * beside nginx running the same configuration; a list on one line, and
 * repeated fields nginx joins, are served.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

const DATE = "Thu, 01 Jan 1970 00:00:00 GMT";

/**
 * Each field nginx takes once only (`UNIQUE_FIELDS`) and a value it takes
 * on one line; `Host` is refused by `Deno.serve` itself.
 */
const UNIQUE: [string, string][] = [
  ["Content-Length", "0"],
  ["Content-Range", "bytes 0-1/2"],
  ["If-Modified-Since", DATE],
  ["If-Unmodified-Since", DATE],
  ["If-Match", '"a"'],
  ["If-None-Match", '"a"'],
  ["If-Range", '"a"'],
  ["Transfer-Encoding", "chunked"],
  ["Expect", "100-continue"],
  ["Authorization", "Basic eDp5"],
];

/**
 * An empty `Content-Length` or `Transfer-Encoding` line is refused by
 * `Deno.serve` before the gateway sees the request: a 400 without a line
 * (README, known differences), checked apart.
 */
const RUNTIME_REFUSES = new Set(["Content-Length", "Transfer-Encoding"]);

/** Each row: the lines after `Host`, and the status nginx answers. */
const ROWS: [string[], string][] = [
  [['If-None-Match: "a"', 'If-None-Match: "b"'], "400"],
  [['If-Match: "a"', 'If-Match: "b"'], "400"],
  [[`If-Modified-Since: ${DATE}`, `If-Modified-Since: ${DATE}`], "400"],
  [[`If-Unmodified-Since: ${DATE}`, `if-unmodified-since: ${DATE}`], "400"],
  [['If-Range: "a"', 'If-Range: "b"'], "400"],
  [["Content-Range: a", "Content-Range: b"], "400"],
  [["Expect: 100-continue", "Expect: 100-continue"], "400"],
  [["Authorization: Bearer a", "Authorization: Bearer b"], "400"],
  [["Content-Length: 0", "Content-Length: 0"], "400"],
  // The first repeated one in the order the lines came.
  [[
    'If-Match: "a"',
    'If-None-Match: "b"',
    'If-None-Match: "c"',
    'If-Match: "d"',
  ], "400"],
  // Two lines the joined value does not show: an empty line (the walk
  // leaves no ", " after it), a line of blanks (trimmed to nothing), a
  // first date of three characters (its ", " looks like a date's own).
  ...UNIQUE.filter(([name]) => !RUNTIME_REFUSES.has(name)).flatMap((
    [name, value],
  ): [string[], string][] => [
    [[`${name}:`, `${name}: ${value}`], "400"],
    [[`${name}:   `, `${name}: ${value}`], "400"],
    [[`${name}: ${value}`, `${name}:`], "400"],
    [[`${name}:`, `${name}:`], "400"],
  ]),
  [
    ["If-Modified-Since: Sun", "If-Modified-Since: 06 Nov 1994 08:49:37 GMT"],
    "400",
  ],
  [["If-Unmodified-Since: Mon", "If-Unmodified-Since: x"], "400"],
  [["If-None-Match: abc", "If-None-Match: x, y"], "400"],
  // One line holding a list, and fields nginx takes more than once.
  [['If-None-Match: "a", "b"'], "200"],
  // No ETag matches a `return`: the precondition fails, on one side as
  // on the other.
  [['If-Match: "a", "b"'], "412"],
  [[`If-Modified-Since: ${DATE}`], "200"],
  [["Range: bytes=0-1", "Range: bytes=2-3"], "200"],
  [["Accept: a", "Accept: b"], "200"],
  [["Cookie: a=1", "Cookie: b=2"], "200"],
  [["X-Any: a", "X-Any: b"], "200"],
];

Deno.test("a field nginx takes once only, on two lines, is nginx's 400 and its duplicate line", async () => {
  await using s = await startSideBySide({
    server: `location / { return 200 "ok"; }`,
  });
  const seen: [string, string][] = [];
  for (const [lines] of ROWS) {
    const { ours, theirs } = await s.exchange(
      `GET / HTTP/1.1\r\nHost: localhost\r\n${
        lines.map((l) => `${l}\r\n`).join("")
      }Connection: close\r\n\r\n`,
    );
    deepStrictEqual(
      [ours.status, ours.errors, ours.access],
      [theirs.status, theirs.errors, theirs.access],
      lines.join(" | "),
    );
    seen.push([lines.join(" | "), ours.status]);
  }
  deepStrictEqual(
    seen,
    ROWS.map(([lines, status]) => [lines.join(" | "), `HTTP/1.1 ${status}`]),
  );
});

Deno.test("an empty Content-Length or Transfer-Encoding line beside another is a 400, as nginx's", async () => {
  await using s = await startSideBySide({
    server: `location / { return 200 "ok"; }`,
  });
  const seen: string[][] = [];
  for (const [name, value] of UNIQUE) {
    if (!RUNTIME_REFUSES.has(name)) continue;
    for (
      const lines of [[`${name}:`, `${name}: ${value}`], [
        `${name}: ${value}`,
        `${name}:`,
      ]]
    ) {
      // The runtime's own 400 writes no access line to wait for.
      const { ours, theirs } = await s.exchange(
        `GET / HTTP/1.1\r\nHost: localhost\r\n${
          lines.map((l) => `${l}\r\n`).join("")
        }Connection: close\r\n\r\n`,
        null,
      );
      seen.push([lines.join(" | "), ours.status, theirs.status]);
    }
  }
  deepStrictEqual(
    seen,
    seen.map(([lines]) => [lines!, "HTTP/1.1 400", "HTTP/1.1 400"]),
  );
});
