/**
 * A field nginx does not refuse on two lines is read by its first line in
 * nginx 1.22 (`ngx_http_process_header_line`,
 * `ngx_http_variable_unknown_header`), `Cookie` and `X-Forwarded-For`
 * joined: `Range`, the access line's referrer, agent and user,
 * `$http_NAME` in a value and in a log format, `$content_type`, gzip's
 * `Accept-Encoding`. Beside nginx running the same configuration.
 */
import { deepStrictEqual } from "node:assert/strict";
import { sideBySideAhead, startSideBySide } from "../access/_side_by_side.ts";

const VALUES =
  "ua=[$http_user_agent] ref=[$http_referer] x=[$http_x_any] xff=[$http_x_forwarded_for] ct=[$content_type] ck=[$http_cookie]";

/** Each row: the target, and the lines after `Host`. */
const ROWS: [string, string[]][] = [
  ["/files/a.txt", ["Range: bytes=0-1", "Range: bytes=2-3"]],
  ["/files/a.txt", ["Range:", "Range: bytes=0-1"]],
  ["/files/a.txt", ["Range: bytes=0-1", "Range:"]],
  ["/files/a.txt", ["Range: bytes=0-1", "range: bytes=2-3, 4-5"]],
  ["/v", ["User-Agent: a", "User-Agent: b"]],
  ["/v", ["User-Agent: a, b"]],
  ["/v", ["User-Agent:", "User-Agent: b"]],
  ["/v", ["Referer: http://a/", "Referer: http://b/"]],
  ["/v", ["X-Any: a", "X-Any: b", "X-Any: c"]],
  ["/v", ["X-Any:", "X-Any: b"]],
  ["/v", ["X-Any: a, b"]],
  ["/v", ["X-Forwarded-For: 10.0.0.1", "X-Forwarded-For: 10.0.0.2"]],
  ["/v", ["Content-Type: text/a", "Content-Type: text/b"]],
  ["/v", ["Cookie: a=1", "Cookie: b=2"]],
  // Refused (a duplicate line) before a location: the server's log.
  ["/files/a.txt", ["Authorization: Basic eDp5", "Authorization:"]],
  ["/files/a.txt", ["Authorization:", "Authorization: Basic eDp5"]],
  ["/gz/a.txt", ["Accept-Encoding: identity", "Accept-Encoding: gzip"]],
  ["/gz/a.txt", ["Accept-Encoding: gzip", "Accept-Encoding: identity"]],
  // A request the gateway derives from the client's (an error page's)
  // reads them as the client's does.
  ["/page", ["Range: bytes=0-1", "Range: bytes=2-3"]],
  ["/page", ["Referer: http://a/", "Referer: http://b/"]],
];

/** A body as compared: a gzip stream's bytes are each side's zlib's own. */
function shown(body: string): string {
  return body.includes("\x1f\ufffd\b") ? "(gzip)" : body;
}

const FILES = {
  "files/a.txt": "0123456789",
  "gz/a.txt": "z".repeat(200),
};
sideBySideAhead([FILES]);

Deno.test("a repeated field nginx takes is read by its first line, as nginx 1.22 reads it", async () => {
  await using s = await startSideBySide({
    files: FILES,
    http: [
      `log_format lines '$http_x_any|$http_user_agent|$http_referer|$remote_user';`,
    ],
    server: [
      "root $HTML;",
      `location = /v { access_log $LOGS/lines.log lines; return 200 "${VALUES}\\n"; }`,
      "location /files/ { }",
      "location = /page { error_page 404 = /files/a.txt; return 404; }",
      "location /gz/ { gzip on; gzip_min_length 1; gzip_types text/plain; }",
    ].join("\n"),
  });
  const got: string[][] = [];
  const want: string[][] = [];
  for (const [target, lines] of ROWS) {
    // `/v` writes its own log, compared at the end.
    const { ours, theirs } = await s.exchange(
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${
        lines.map((l) => `${l}\r\n`).join("")
      }Connection: close\r\n\r\n`,
      target === "/v" ? "lines.log" : "access.log",
    );
    const row = `${target} ${lines.join(" | ")}`;
    got.push([row, ours.status, shown(ours.body), ...ours.access]);
    want.push([row, theirs.status, shown(theirs.body), ...theirs.access]);
  }
  const logged = s.logLines("lines.log");
  got.push(logged.ours);
  want.push(logged.theirs);
  deepStrictEqual(got, want);
});
