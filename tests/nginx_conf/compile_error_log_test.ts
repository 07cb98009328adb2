/**
 * `error_log` as the compiler reads it: each level's list (its own, or the
 * nearest parent's, the main level's last), several per level sorted as
 * `ngx_log_insert` keeps them, the files opened once, and nginx's `[emerg]`
 * for each value the gateway cannot write.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";
import { MAX_ERROR_LOG_FILES } from "../../src/nginx_conf/compile_error_logs.ts";
import type { HttpConf, LocationConf } from "../../src/engine/mod.ts";
import { compileText, refusals } from "../engine/_conf.ts";

/** A level's list as `path level` strings, the prefix `/n` dropped. */
function shown(logs: LocationConf["errorLogs"]): string[] {
  return logs.map((log) => `${log.path.replace(/^\/n\//, "")} ${log.level}`);
}

/** A location of the first server, or of the server given, by name. */
function location(conf: HttpConf, name: string, server = 0): LocationConf {
  const at = conf.servers[server]!.conf;
  const found = [...at.locations.prefixes, ...at.locations.exact.values()]
    .find((l) => l.name === name);
  if (found === undefined) throw new Error(`no location ${name}`);
  return found;
}

Deno.test("compileHttp() gives each level its own error_log or its parent's, as nginx merges them", async (t) => {
  // [text before and with http, [main, server 0, server 1 or location /a/, location /b/]]
  const cases: [string, string, string[][]][] = [
    [
      "none: nginx's logs/error.log at error everywhere",
      "http { server { location /a/ {} location /b/ {} } }",
      [
        ["logs/error.log error"],
        ["logs/error.log error"],
        ["logs/error.log error"],
        ["logs/error.log error"],
      ],
    ],
    [
      "the main level's, inherited by every level",
      "error_log logs/m.log warn; http { server { location /a/ {} location /b/ {} } }",
      [["logs/m.log warn"], ["logs/m.log warn"], ["logs/m.log warn"], [
        "logs/m.log warn",
      ]],
    ],
    [
      "http's is not the main level's",
      "http { error_log logs/h.log info; server { location /a/ {} location /b/ {} } }",
      [["logs/error.log error"], ["logs/h.log info"], ["logs/h.log info"], [
        "logs/h.log info",
      ]],
    ],
    [
      "a location's own, the other location the server's",
      "error_log logs/m.log; http { server { error_log logs/s.log notice; location /a/ { error_log logs/a.log debug; } location /b/ {} } }",
      [["logs/m.log error"], ["logs/s.log notice"], ["logs/a.log debug"], [
        "logs/s.log notice",
      ]],
    ],
    [
      "several on one level, most verbose first, file order among equals",
      "http { server { error_log logs/x.log; error_log stderr info; error_log logs/y.log warn; error_log logs/z.log; location /a/ {} location /b/ { error_log logs/b.log; } } }",
      [
        ["logs/error.log error"],
        [
          "stderr info",
          "logs/y.log warn",
          "logs/x.log error",
          "logs/z.log error",
        ],
        [
          "stderr info",
          "logs/y.log warn",
          "logs/x.log error",
          "logs/z.log error",
        ],
        ["logs/b.log error"],
      ],
    ],
    [
      "a nested location inherits its parent location's",
      "http { server { location /a/ { error_log logs/a.log warn; location /a/b/ {} } location /b/ {} } }",
      [
        ["logs/error.log error"],
        ["logs/error.log error"],
        ["logs/a.log warn"],
        [
          "logs/error.log error",
        ],
      ],
    ],
  ];
  for (const [name, text, [main, server, a, b]] of cases) {
    await t.step(name, () => {
      const conf = compileText(text);
      deepStrictEqual(shown(conf.errorLogs), main);
      deepStrictEqual(shown(conf.servers[0]!.conf.errorLogs), server);
      deepStrictEqual(shown(location(conf, "/a/").errorLogs), a);
      deepStrictEqual(shown(location(conf, "/b/").errorLogs), b);
    });
  }
});

Deno.test("compileHttp() gives a second server its own error_log, and shares inherited lists", () => {
  const conf = compileText(`http {
    error_log logs/h.log;
    server { listen 81; location /a/ { if ($args) { return 204; } } location /b/ {} }
    server { listen 82; error_log logs/two.log info; location /a/ {} location /b/ {} }
  }`);
  deepStrictEqual(shown(conf.servers[0]!.conf.errorLogs), ["logs/h.log error"]);
  deepStrictEqual(shown(conf.servers[1]!.conf.errorLogs), [
    "logs/two.log info",
  ]);
  deepStrictEqual(shown(location(conf, "/a/", 1).errorLogs), [
    "logs/two.log info",
  ]);
  // Levels that inherit one list hold the same array: no copy per level.
  strictEqual(location(conf, "/b/").errorLogs, conf.servers[0]!.conf.errorLogs);
  strictEqual(
    location(conf, "/b/", 1).errorLogs,
    conf.servers[1]!.conf.errorLogs,
  );
  deepStrictEqual(conf.errorLogFiles, [
    "/n/logs/error.log",
    "/n/logs/h.log",
    "/n/logs/two.log",
  ]);
  // The least severe level of any log: info lines are looked for.
  strictEqual(conf.errorLogFloor, "info");
  // The start's lines: the main level's first file.
  deepStrictEqual(conf.errorLog, { path: "/n/logs/error.log", level: "error" });
});

Deno.test("compileHttp() opens a file named by several levels once, and the main level's first file takes the start's lines", () => {
  const conf = compileText(`error_log stderr; error_log logs/m.log warn;
  http {
    server { error_log logs/m.log info; location /a/ { error_log logs/a.log; error_log logs/m.log; } }
  }`);
  deepStrictEqual(conf.errorLogFiles, [
    "stderr",
    "/n/logs/m.log",
    "/n/logs/a.log",
  ]);
  deepStrictEqual(conf.errorLog, { path: "/n/logs/m.log", level: "warn" });
  strictEqual(conf.errorLogFloor, "info");
});

Deno.test("compileHttp() writes `error_log off` to a file named off, as nginx, with a warning", () => {
  const text = "events {}\nhttp { server { error_log off; } }";
  const result = compileHttp(
    parseNginxConf("/n/conf/nginx.conf", {
      readTextFile: () => text,
      readDirFiles: () => [],
    }),
    { file: "/n/conf/nginx.conf", prefix: "/n", caseless: false },
  );
  deepStrictEqual(result.errors, []);
  deepStrictEqual(shown(result.conf!.servers[0]!.conf.errorLogs), [
    "off error",
  ]);
  deepStrictEqual(result.warnings.filter((w) => w.includes("error_log")), [
    '"error_log off" writes to a file named "off", as nginx does: nginx\'s error log cannot be turned off in /n/conf/nginx.conf:2',
  ]);
});

Deno.test("compileHttp() refuses an error_log the gateway cannot write, with its line", async (t) => {
  const cases: [string, string[]][] = [
    ["server { error_log syslog:server=10.0.0.1; }", [
      '"error_log syslog:server=10.0.0.1" is not supported: the gateway writes a file',
    ]],
    ["server { location / { error_log memory:1m debug; } }", [
      '"error_log memory:1m debug" is not supported: the gateway writes a file',
    ]],
    ["server { error_log logs/e.log loud; }", ['invalid log level "loud"']],
    ["server { error_log logs/e.log debug_http debug_core; }", [
      '"error_log logs/e.log debug_http debug_core" is not supported: the gateway writes a file',
    ]],
    // One refusal for a directive however many levels inherit it.
    ["error_log logs/e.log loud; server { location /a/ {} location /b/ {} }", [
      'invalid log level "loud"',
    ]],
  ];
  for (const [http, expected] of cases) {
    await t.step(http, () => {
      deepStrictEqual(
        refusals(`http { ${http} }`).map((e) =>
          e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, "")
        ),
        expected,
      );
    });
  }
});

Deno.test("compileHttp() opens at most its bound of error log files", () => {
  const many = Array.from(
    { length: MAX_ERROR_LOG_FILES },
    (_, i) => `location /l${i}/ { error_log logs/l${i}.log; }`,
  ).join("\n");
  // The default logs/error.log is the first file.
  deepStrictEqual(
    refusals(`http { server { ${many} } }`).map((e) =>
      e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, "")
    ),
    [
      `"error_log /n/logs/l${
        MAX_ERROR_LOG_FILES - 1
      }.log" is not supported: the gateway opens at most ${MAX_ERROR_LOG_FILES} error log files`,
    ],
  );
});
