/**
 * nginx's error and access logs: the line formatters, the `*N` connection
 * numbers, and the append-only files they are written to.
 *
 * @module
 */

export { basicAuthUser } from "./access_log.ts";
export { ConnectionCounter } from "./connection_counter.ts";
export { writeEmergLine } from "./emerg_log.ts";
export {
  describeError,
  escapeErrorLogText,
  formatConsoleLine,
  formatErrorLogTime,
  isLevelEnabled,
  LOG_LEVELS,
} from "./error_log.ts";
export type { LogLevel } from "./error_log.ts";
export { LogFile } from "./log_file.ts";
export { createLogger } from "./logger.ts";
export type { ErrorEvent, Logger } from "./logger.ts";
