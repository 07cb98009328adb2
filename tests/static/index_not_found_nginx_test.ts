/**
 * A folder's URI whose folder is missing (ngx_http_index_error), beside
 * nginx 1.22: its line gives the open's own error, `(20: Not a directory)`
 * where a part of the folder is a file, `(2: …)` where it is missing.
 */
import { deepStrictEqual } from "node:assert/strict";
import { sideBySideAhead, startSideBySide } from "../access/_side_by_side.ts";

const FILES = { "a.txt": "a\n", "d/index.html": "d\n" };
sideBySideAhead([FILES]);

Deno.test("a folder's URI through a file or a missing folder is 404 with nginx's error", async () => {
  await using s = await startSideBySide({
    server: "root $HTML; location / { }",
    files: FILES,
  });
  const got: unknown[] = [];
  const want: unknown[] = [];
  for (const uri of ["/a.txt/", "/a.txt/b/", "/none/", "/none/b/", "/d/x/"]) {
    const { ours, theirs } = await s.exchange(
      `GET ${uri} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
    );
    // Both serve one folder; nginx's side names it from its conf folder.
    const html = (lines: string[]) =>
      lines.map((l) => l.replace(/"[^"]*\/html\//, '"HTML/'));
    got.push([uri, ours.status, html(ours.errors), ours.access]);
    want.push([uri, theirs.status, html(theirs.errors), theirs.access]);
  }
  deepStrictEqual(got, want);
});
