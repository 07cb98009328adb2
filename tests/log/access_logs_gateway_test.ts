/**
 * `access_log` per http/server/location, several per level, `off`, `if=`
 * and formats, beside nginx 1.22 from the same nginx.conf: which files get
 * a line for which request, and the lines (time and bytes masked).
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

function get(path: string, more = ""): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: t\r\n${more}Connection: close\r\n\r\n`;
}

Deno.test("access logs per level, several per level, off and if= write as nginx 1.22", async () => {
  await using both = await startSideBySide({
    http: [
      "log_format short '$remote_addr $request $status $http_x_tag';",
      "map $http_x_skip $loggable { default 1; yes 0; }",
    ],
    server: `
    access_log $LOGS/all.log short;
    location /two/ {
      access_log $LOGS/a.log short;
      access_log $LOGS/b.log combined;
      try_files /none =204;
    }
    location /off/ { access_log off; try_files /none =204; }
    location /cond/ {
      access_log $LOGS/c.log short if=$loggable;
      try_files /none =204;
    }
    location /nested/ {
      access_log $LOGS/n.log short;
      location /nested/inner/ { try_files /none =204; }
      try_files /none =204;
    }
    location /tf/ { access_log $LOGS/tf.log short; try_files /none /two/x; }
`,
  });
  // The server level's log (the http level's access.log is replaced).
  const steps: [string, string, string | null][] = [
    ["/x", "X-Tag: one\r\n", "all.log"],
    ["/two/y", "X-Tag: two\r\n", "a.log"],
    ["/off/z", "", null],
    ["/cond/a", "", "c.log"],
    ["/cond/b", "X-Skip: yes\r\n", null],
    ["/nested/inner/c", "X-Tag: n\r\n", "n.log"],
    // Logged by the location that answered, after the internal redirect.
    ["/tf/d", "", "a.log"],
    ["/x2", "", "all.log"],
  ];
  for (const [path, more, wait] of steps) {
    const { ours, theirs } = await both.exchange(get(path, more), wait);
    deepStrictEqual(ours.status, theirs.status, path);
  }
  for (
    const name of ["all.log", "a.log", "b.log", "c.log", "n.log", "tf.log"]
  ) {
    const { ours, theirs } = both.logLines(name);
    deepStrictEqual(ours, theirs, name);
  }
  deepStrictEqual(both.logLines("a.log").ours, [
    "127.0.0.1 GET /two/y HTTP/1.1 204 two",
    "127.0.0.1 GET /tf/d HTTP/1.1 204 -",
  ]);
});
