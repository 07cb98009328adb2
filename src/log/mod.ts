/**
 * nginx's error and access logs: the line formatters, the `*N` connection
 * numbers, and the append-only files they are written to.
 *
 * @module
 */

export {
  type AccessLogEntry,
  escapeLogValue,
  formatAccessLogLine,
  formatTimeLocal,
} from "./access_log.ts";
export {
  COMBINED,
  compileLogFormat,
  formatLogLine,
  type LogEscape,
  type LogFormat,
  type LogFormatResult,
  type LogVariable,
  type LogVariableScope,
} from "./log_format.ts";
export type {
  HeaderReader,
  LogRecord,
  RecordVars,
  UpstreamTry,
} from "./log_record.ts";
export { recordValue } from "./log_variables.ts";
export {
  escapeLogJson,
  formatSeconds,
  formatTimeIso8601,
  logLineBytes,
  unescapedLogValue,
} from "./log_values.ts";
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
export { UpstreamTries } from "./upstream_tries.ts";
export { joinedFieldLines, requestHeadBytes } from "./request_length.ts";
export {
  framingField,
  type SentBody,
  sentFields,
  sentHeadBytes,
  type SentResponse,
} from "./sent_head.ts";
export type {
  AccessEvent,
  AccessTarget,
  ErrorEvent,
  ErrorTarget,
  LineSink,
  Logger,
} from "./logger.ts";
