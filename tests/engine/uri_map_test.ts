/**
 * Files under a regex location's `alias`, built from its captures, served
 * as nginx 1.22 serves them, and kept inside the alias's folder.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";
import { compileText, phases } from "./_conf.ts";

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

Deno.test("containmentRoot() is the folder a root or alias names before its first variable, whichever variable", async (t) => {
  // [location, URI, the file, the folder it must stay in]; the prefix is /n.
  const rows: [string, string, string, string][] = [
    // Without variables: the root or alias itself (the common path).
    ["location / { root /srv/www; }", "/app.js", "/srv/www/app.js", "/srv/www"],
    ["location /a/ { alias /srv/a/; }", "/a/x.js", "/srv/a/x.js", "/srv/a/"],
    ["location /a/ { alias /srv/a; }", "/a/x.js", "/srv/ax.js", "/srv/a"],
    ["location / { root html; }", "/i.html", "/n/html/i.html", "/n/html"],
    // A regex location's alias without variables names the file.
    [
      "location ~ ^/f$ { alias /srv/f/one.ico; }",
      "/f",
      "/srv/f/one.ico",
      "/srv/f",
    ],
    // Captures, numbered or named, and `set` variables made of them.
    [
      "location ~ ^/d/(.*)$ { alias /srv/d/$1; }",
      "/d/x",
      "/srv/d/x",
      "/srv/d/",
    ],
    [
      "location ~ ^/n(?<p>.*)$ { alias /srv/w/$p; }",
      "/n../s",
      "/srv/w/../s",
      "/srv/w/",
    ],
    [
      "location ~ ^/q(?<p>.*)$ { set $z $p; alias /srv/w/$z; }",
      "/q../s",
      "/srv/w/../s",
      "/srv/w/",
    ],
    [
      "location ~ ^/ek(/.*)$ { alias /srv/w$1; }",
      "/ek/l/q",
      "/srv/w/l/q",
      "/srv/w",
    ],
    [
      "location ~ ^/u/(\\w+)/(.*)$ { alias /srv/$1/x/$2; }",
      "/u/w/f",
      "/srv/w/x/f",
      "/srv/",
    ],
    [
      "location ~ ^/i/(.*)$ { alias /srv/w/img_$1; }",
      "/i/a",
      "/srv/w/img_a",
      "/srv/w/img_",
    ],
    ["location ~ ^/r/(.*)$ { alias w/$1; }", "/r/a", "/n/w/a", "/n/w/"],
    // `root` with variables: the text before the first one.
    ["location / { root /srv/$host; }", "/a", "/srv/localhost/a", "/srv/"],
    ["location / { root /srv/$arg_s/; }", "/a?s=..", "/srv/../a", "/srv/"],
    // A value that begins with a variable: that variable and what follows.
    ["location / { set $b /srv/b; root $b; }", "/a", "/srv/b/a", "/srv/b"],
    [
      "location ~ ^/v/(.*)$ { set $b /srv/b; alias $b/x/$1; }",
      "/v/a",
      "/srv/b/x/a",
      "/srv/b/x/",
    ],
  ];
  for (const [location, uri, path, root] of rows) {
    await t.step(location, () => {
      const conf = compileText(`http { server { ${location} } }`);
      const { content } = phases(conf, uri, { files: { [path]: "file" } });
      deepStrictEqual(
        content.kind === "static" ? [content.path, content.root] : content.kind,
        [path, root],
      );
    });
  }
});
