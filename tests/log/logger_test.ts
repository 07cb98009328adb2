import { deepStrictEqual } from "node:assert/strict";
import { createLogger } from "../../src/log/logger.ts";

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
