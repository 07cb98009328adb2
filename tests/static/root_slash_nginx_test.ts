/**
 * A location whose `root` or `alias` is the file system's root (`/`, or a
 * drive's `C:\` on Windows) serves what is below it, beside nginx 1.22: the
 * containment check's prefix is the root itself, not `//`.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

// This file itself: the containment proof waits for every folder on the
// path to be still, and the suite's temporary folder never is.
const file = new URL(import.meta.url).pathname;
const text = Deno.readTextFileSync(file);

Deno.test({
  name:
    "root / and alias / serve a file below the file system's root, as nginx 1.22",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using s = await startSideBySide({
      server: "location /r/ { root /; } location /t/ { alias /; }",
    });
    const got: unknown[] = [];
    const want: unknown[] = [];
    // `location /r/` with `root /` maps /r/… to /r/…: a folder the test
    // cannot make, so only its refusal of a missing file is compared.
    for (const uri of [`/t${file}`, "/r/none"]) {
      const { ours, theirs } = await s.exchange(
        `GET ${uri} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
      );
      got.push([uri, ours.status, ours.body, ours.errors.length]);
      want.push([uri, theirs.status, theirs.body, theirs.errors.length]);
    }
    deepStrictEqual(got, want);
    deepStrictEqual(got[0], [
      `/t${file}`,
      "HTTP/1.1 200",
      text,
      0,
    ]);
  },
});
