/**
 * `error_page` chains as nginx 1.22 runs them, side by side with it: with
 * `recursive_error_pages on` a loop of pages ends after nginx's ten URI
 * changes with its 500 and cycle line; without it, after the first page.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

Deno.test("an error_page loop ends as nginx's does: the 500 and its cycle line, or the first page's status", async () => {
  await using s = await startSideBySide({
    server: `
    location /pair-a { recursive_error_pages on; error_page 404 /pair-b; return 404; }
    location /pair-b { recursive_error_pages on; error_page 404 /pair-a; return 404; }
    location /self { recursive_error_pages on; error_page 403 /self; return 403; }
    location /once-a { error_page 404 /once-b; return 404; }
    location /once-b { error_page 404 /once-a; return 404; }
    location /code { recursive_error_pages on; error_page 404 =410 /code; return 404; }
  `,
  });
  const seen: [string, string, string[]][] = [];
  for (const path of ["/pair-a", "/self", "/once-a", "/code"]) {
    const { ours, theirs } = await s.exchange(
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    deepStrictEqual(
      [ours.status, ours.errors, ours.access],
      [theirs.status, theirs.errors, theirs.access],
      path,
    );
    seen.push([path, ours.status, ours.errors.map((l) => l.split(", ")[0]!)]);
  }
  const cycle = (to: string) =>
    `TIME [error] PID#TID: *N rewrite or internal redirection cycle while internally redirecting to "${to}"`;
  deepStrictEqual(seen, [
    ["/pair-a", "HTTP/1.1 500", [cycle("/pair-b")]],
    ["/self", "HTTP/1.1 500", [cycle("/self")]],
    ["/once-a", "HTTP/1.1 404", []],
    ["/code", "HTTP/1.1 500", [cycle("/code")]],
  ]);
});
