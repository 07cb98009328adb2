/**
 * `configPaths()`: the folders a compiled nginx.conf reads and writes, from
 * every level the engine runs (named, nested and `if` locations too).
 */
import { deepStrictEqual } from "node:assert/strict";
import { configPaths, loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { memoryIo } from "./_memory_io.ts";

const MAIN = "/n/conf/nginx.conf";

Deno.test("configPaths() names the folders of every level, once, a written one not as read", () => {
  const cases: [string, string, ReturnType<typeof configPaths>][] = [
    // [case, the http block's content, the folders (after /n/conf, read)]
    [
      "a named location's root",
      `server { listen 80; root /a;
       location / { try_files $uri @app; }
       location @app { root /named; } }`,
      {
        read: ["/n/conf", "/a", "/named"],
        write: ["/n/logs"],
        unknown: [],
      },
    ],
    [
      "a nested location's alias and an if block's root",
      `server { listen 80;
       location /x/ { location /x/y/ { alias /deep/y/; }
         if ($arg_v) { root /iffy; } } }`,
      {
        read: ["/n/conf", "/n/html", "/iffy", "/deep/y"],
        write: ["/n/logs"],
        unknown: [],
      },
    ],
    [
      "relative paths start at the prefix, a user file at the conf folder",
      `
       server { listen 80; root site_$host; auth_basic x;
         auth_basic_user_file auth/users; access_log logs/a/b.log; }`,
      {
        read: ["/n/conf", "/n", "/n/conf/auth"],
        write: ["/n/logs/a", "/n/logs"],
        unknown: [],
      },
    ],
    [
      "a path that starts with a variable is unknown; stderr writes no folder",
      `
       error_log stderr; server { listen 80; root $arg_dir; access_log off; }`,
      {
        // The main level's default logs/error.log stays.
        read: ["/n/conf"],
        write: ["/n/logs"],
        unknown: ["$arg_dir"],
      },
    ],
  ];
  for (const [name, http, expected] of cases) {
    const result = loadNginxConf(
      MAIN,
      memoryIo({ [MAIN]: `events {}\nhttp {\n${http}\n}\n` }),
    );
    if (!result.ok) throw new Error(`${name}: ${result.message}`);
    deepStrictEqual(configPaths(result.engine, result.files), expected, name);
  }
});
