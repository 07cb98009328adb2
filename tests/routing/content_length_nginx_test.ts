/**
 * Every `Content-Length` nginx 1.22 refuses, beside nginx running the same
 * configuration: its status, its `[info]` line at `error_log … info`
 * (`client sent invalid "Content-Length" header while reading client
 * request headers`, or the duplicate line's) and its access line. Only
 * the values `Deno.serve` hands to the gateway can be logged: its HTTP/1
 * parser answers a sign, hex, an empty value, a list, a value past 2^64 - 1
 * (23 digits) with an empty 400 before any handler runs, and trims a tab
 * around the digits (README, request-line-parser). Those rows are held to
 * nginx's status, with nothing logged, so a Deno release that starts
 * handing them over shows here; the values it hands over (past off_t's
 * 2^63 - 1, two lines) are held to nginx's lines too
 * (`parseContentLength`, the one parser).
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

/**
 * The `Content-Length` lines of each request, and who decides it: the
 * gateway (`"gateway"`, compared whole with nginx), Deno's parser refusing
 * it (`"deno"`: nginx's status, no line), or Deno's trimming it to a
 * length (`"trimmed"`: nginx refuses, the gateway reads the digits).
 */
const ROWS: [string[], "gateway" | "deno" | "trimmed"][] = [
  [["9223372036854775807"], "gateway"],
  [["9223372036854775808"], "gateway"],
  [["18446744073709551615"], "gateway"],
  [["05"], "gateway"],
  [[" 5 "], "gateway"],
  [["5", "5"], "gateway"],
  [["+5"], "deno"],
  [["-1"], "deno"],
  [["0x10"], "deno"],
  [["1e3"], "deno"],
  [[""], "deno"],
  [["5,6"], "deno"],
  [["5, 5"], "deno"],
  [["18446744073709551616"], "deno"],
  [["99999999999999999999999"], "deno"],
  [["٣"], "deno"],
  [["5", "6"], "deno"],
  [["", "5"], "deno"],
  [["5\t"], "trimmed"],
  [["\t5"], "trimmed"],
];

Deno.test("a Content-Length nginx refuses gets nginx's status, and its info line wherever Deno.serve hands the value over", async () => {
  await using s = await startSideBySide({
    server: "location / { return 200 ok; }",
  });
  const got: unknown[] = [];
  const want: unknown[] = [];
  for (const [lines, decides] of ROWS) {
    const { ours, theirs } = await s.exchange(
      `POST / HTTP/1.1\r\nHost: t\r\n${
        lines.map((l) => `Content-Length: ${l}\r\n`).join("")
      }Connection: close\r\n\r\nhello`,
      // Deno's refusals write no line to wait for.
      decides === "gateway" ? "access.log" : null,
    );
    const row = JSON.stringify(lines);
    got.push([row, ours.status, ours.errors, ours.access]);
    want.push(
      decides === "gateway"
        ? [row, theirs.status, theirs.errors, theirs.access]
        : decides === "deno"
        ? [row, theirs.status, [], []]
        // nginx refuses a tab in the value; Deno trims it and the body of
        // five bytes is read: nginx's 400 is the gateway's 200.
        : [row, "HTTP/1.1 200", [], ours.access],
    );
    if (decides === "trimmed") {
      deepStrictEqual(
        [theirs.status, theirs.errors.length],
        ["HTTP/1.1 400", 1],
        row,
      );
    }
  }
  deepStrictEqual(got, want);
});
