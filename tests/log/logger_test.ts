import { deepStrictEqual } from "node:assert/strict";
import { createLogger } from "../../src/log/logger.ts";
import {
  COMBINED,
  compileLogFormat,
  formatTimeLocal,
  type LogLevel,
} from "../../src/log/mod.ts";

Deno.test("createLogger() remembers the last line written at error or worse", () => {
  const lines: string[] = [];
  const logger = createLogger({
    errorLog: { write: (l: string) => lines.push(l) },
    accessLog: null,
    level: "info",
    pid: 1,
    tid: 1,
    now: () => new Date(2026, 0, 2, 3, 4, 5),
  });
  const seen: (string | null)[] = [logger.lastError!()];
  logger.error({ level: "error", message: "first" });
  seen.push(logger.lastError!());
  // Below error: written, not remembered.
  logger.error({ level: "warn", message: "a warning" });
  logger.error({ level: "info", message: "a note" });
  seen.push(logger.lastError!());
  logger.error({ level: "crit", message: "worse" });
  seen.push(logger.lastError!());
  deepStrictEqual(seen, [
    null,
    "2026/01/02 03:04:05 [error] 1#1: first",
    "2026/01/02 03:04:05 [error] 1#1: first",
    "2026/01/02 03:04:05 [crit] 1#1: worse",
  ]);
  deepStrictEqual(lines.length, 4);
});

Deno.test("createLogger() does not remember a line its level filtered out", () => {
  const logger = createLogger({
    errorLog: { write: () => {} },
    accessLog: null,
    level: "crit",
    pid: 1,
    tid: 1,
  });
  logger.error({ level: "error", message: "not written" });
  deepStrictEqual(logger.lastError!(), null);
});

Deno.test("createLogger() writes a location's access line to each of its files in its format, and closes each file once", () => {
  const written: Record<string, string[]> = { main: [], a: [], b: [] };
  const closed: string[] = [];
  const sink = (name: string) => ({
    write: (l: string) => written[name]!.push(l),
    close: () => closed.push(name),
  });
  const main = sink("main");
  const a = sink("a");
  const short = compileLogFormat("short", ["$remote_user $status"]);
  if (!short.ok) throw new Error(short.error);
  const logger = createLogger({
    errorLog: { write: () => {} },
    accessLog: main,
    accessFiles: new Map([["/l/main.log", main], ["/l/a.log", a], [
      "/l/b.log",
      sink("b"),
    ]]),
    now: () => new Date(2026, 0, 2, 3, 4, 5),
  });
  const event = {
    remoteAddr: "10.0.0.1",
    remoteUser: "ann",
    request: "GET / HTTP/1.1",
    status: 401,
    bodyBytesSent: 5,
    referrer: "http://r/",
    userAgent: "t",
  };
  logger.accessTo([
    { path: "/l/a.log", format: short.format },
    { path: "/l/b.log", format: COMBINED },
    // Not opened by path: the default access log takes it.
    { path: "/elsewhere.log", format: short.format },
  ], event);
  deepStrictEqual(written, {
    main: ["ann 401"],
    a: ["ann 401"],
    b: [
      `10.0.0.1 - ann [${
        formatTimeLocal(new Date(2026, 0, 2, 3, 4, 5))
      }] "GET / HTTP/1.1" 401 5 "http://r/" "t"`,
    ],
  });
  logger.close();
  deepStrictEqual(closed.sort(), ["a", "b", "main"]);
});

Deno.test("createLogger() writes a request's error line to each of its level's logs that takes its level, and other lines to the main level's", async (t) => {
  const written = new Map<string, string[]>();
  const closed: string[] = [];
  const sink = (name: string) => ({
    write: (l: string) => {
      written.set(name, [...written.get(name) ?? [], l.slice(20)]);
    },
    close: () => closed.push(name),
  });
  const shared = sink("shared");
  const logger = createLogger({
    errorLog: sink("fallback"),
    accessLog: null,
    level: "warn",
    pid: 1,
    tid: 1,
    now: () => new Date(2026, 0, 2, 3, 4, 5),
    errorLogs: [{ path: "/main", level: "notice" }],
    errorFiles: new Map([
      ["/main", sink("main")],
      ["/a", sink("a")],
      ["/info", sink("info")],
      // Two paths naming one open file (a level and an access log): one sink.
      ["/shared", shared],
    ]),
    accessFiles: new Map([["/shared", shared]]),
  });
  // [logs, line level, files written]
  const cases: [
    string,
    { path: string; level: LogLevel }[],
    LogLevel,
    string[],
  ][] = [
    ["main: no request", [], "notice", ["main"]],
    ["one file", [{ path: "/a", level: "error" }], "error", ["a"]],
    ["below the file's level", [{ path: "/a", level: "error" }], "warn", []],
    [
      "each file by its own level",
      [
        { path: "/info", level: "info" },
        { path: "/a", level: "error" },
      ],
      "info",
      ["info"],
    ],
    [
      "both levels take it",
      [
        { path: "/info", level: "info" },
        { path: "/a", level: "error" },
      ],
      "crit",
      ["info", "a"],
    ],
    // The built-in configuration's and tests' one sink: the main log.
    ["a file not opened", [{ path: "/nowhere", level: "debug" }], "error", [
      "main",
    ]],
    ["a shared file", [{ path: "/shared", level: "error" }], "error", [
      "shared",
    ]],
  ];
  for (const [name, logs, level, files] of cases) {
    await t.step(name, () => {
      written.clear();
      if (name.startsWith("main")) logger.error({ level, message: name });
      else logger.errorTo(logs, { level, message: name });
      deepStrictEqual(
        [...written.entries()],
        files.map((f) => [f, [`[${level}] 1#1: ${name}`]]),
      );
    });
  }
  logger.close();
  deepStrictEqual(closed.sort(), ["a", "fallback", "info", "main", "shared"]);
});
