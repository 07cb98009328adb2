import { deepStrictEqual } from "node:assert/strict";
import { createLogger } from "../../src/log/logger.ts";
import {
  COMBINED,
  compileLogFormat,
  formatTimeLocal,
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
