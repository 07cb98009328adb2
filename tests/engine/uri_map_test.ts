/**
 * Files under a regex location's `alias`, built from its captures, served
 * as nginx 1.22 serves them, and kept inside the alias's folder.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

Deno.test("a regex location's alias serves the file its captures name, as nginx", async (t) => {
  await using both = await startSideBySide({
    server: `location ~ ^/dl/(.*)$ { alias $HTML/files/$1; }`,
    files: { "files/a.txt": "a\n", "files/sub/b.txt": "b\n" },
  });
  for (const path of ["/dl/a.txt", "/dl/sub/b.txt", "/dl/nope.txt"]) {
    await t.step(path, async () => {
      const { ours, theirs } = await both.exchange(
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      );
      const seen = (o: typeof ours) => [
        o.status,
        o.body,
        o.errors.map((l) => l.replace(/"[^"]*\/html\//, '"HTML/')),
      ];
      deepStrictEqual(seen(ours), seen(theirs));
    });
  }
});
