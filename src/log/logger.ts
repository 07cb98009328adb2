/**
 * The gateway's only log I/O: the error logs (nginx grammar, each file at
 * its level: the main level's, or a server's or location's for a line about
 * a request, `error_lines.ts`) and the access logs (`combined` or a
 * `log_format`), each written to a line sink.
 *
 * @module
 */

import { type AccessLogEntry, formatAccessLogLine } from "./access_log.ts";
import { COMBINED, formatLogLine, type LogFormat } from "./log_format.ts";
import type {
  HeaderReader,
  LogRecord,
  RecordVars,
  UpstreamTry,
} from "./log_record.ts";
import { formatErrorLogLine, type LogLevel } from "./error_log.ts";
import { sentFields, type SentResponse } from "./sent_head.ts";
import {
  type ErrorEvent,
  ErrorLines,
  type ErrorTarget,
  type LineSink,
} from "./error_lines.ts";

export type { ErrorEvent, ErrorTarget, LineSink };

/**
 * An access-log entry before the logger adds the time; a `log_format`
 * other than `combined` reads the request's and response's fields too.
 */
export type AccessEvent = Omit<AccessLogEntry, "time"> & {
  /** The request's fields, for `$http_NAME`. */
  headers?: HeaderReader;
  /** The response's fields, for `$sent_http_NAME` (when `sent` is absent). */
  responseHeaders?: HeaderReader;
  /**
   * The response as sent: its fields and framing for `$sent_http_NAME`,
   * its head for `$bytes_sent`. Absent when nothing reached the client.
   */
  sent?: SentResponse;
  /** When the request started, epoch ms, for `$request_time`. */
  startMs?: number;
  /**
   * `$request_length`: the head's bytes and the body's read, counted
   * when a line reads it (else 0).
   */
  requestLength?: number;
  /** `$connection`: the connection's number (0 when not known). */
  connection?: number;
  /** `$connection_requests`: the requests on it (0 when not known). */
  connectionRequests?: number;
  /** The upstream tries, for `$upstream_*`. */
  upstream?: readonly UpstreamTry[];
  /** The request's variables, for the engine's names and `if=`. */
  vars?: RecordVars | undefined;
};

/** One access log a request writes to: a file opened at start and a format. */
export interface AccessTarget {
  /** The file, as given to {@linkcode LoggerOptions.accessFiles}. */
  readonly path: string;
  /** Its `log_format`. */
  readonly format: LogFormat;
  /**
   * `if=`: no line when its value is empty or `0`. Evaluated when the line
   * is written, as ngx_http_log_handler does, on the request's variables
   * with the finished record (a `map` on `$status` sees the final status).
   */
  readonly condition?: { evaluate(vars: RecordVars): string } | null;
}

/** Writes error and access lines. */
export interface Logger {
  /**
   * Writes an error-log line to the main level's error logs (lines about
   * no request: start, stop, faults), each that its level enables.
   */
  error(event: ErrorEvent): void;
  /**
   * Writes an error-log line about a request to the error logs of the level
   * that handles it, each that its level enables (`ngx_log_error_core` over
   * the list `r->connection->log` was switched to). A file not opened by
   * path (the built-in configuration's, tests' one sink) is the main log.
   */
  errorTo(logs: readonly ErrorTarget[], event: ErrorEvent): void;
  /** Writes an access-log line to the default access log (when it is on). */
  access(event: AccessEvent): void;
  /**
   * Writes an access-log line to each of a location's access logs, each in
   * its format; a file not opened by path goes to the default access log.
   */
  accessTo(targets: readonly AccessTarget[], event: AccessEvent): void;
  /** Whether there is an access log (nothing to compute for it if not). */
  readonly accessEnabled: boolean;
  /**
   * The access log's format reads fields beyond `combined`'s: the request
   * and response fields and the upstream tries must be kept for it.
   */
  readonly accessNeedsFields: boolean;
  /**
   * Some line reads the request's fields when it is written (a format's
   * `$http_NAME` beyond `combined`'s, an `if=` on `$cookie_NAME`): only
   * then is a copy of them kept past the exchange.
   */
  readonly accessCopiesFields: boolean;
  /**
   * Some line reads `$request_length`: each request keeps its field lines
   * for the count, and its body is read so that one cut short tells its
   * bytes.
   */
  readonly accessCountsRequest: boolean;
  /**
   * Some line reads `$content_length`: a chunked body the request did not
   * read is discarded before the line is written (nginx's
   * ngx_http_discard_request_body), for the length nginx gives it.
   */
  readonly accessDiscardsBody: boolean;
  /**
   * The last line written at `error` or more severe, for the built-in page;
   * `null` before the first.
   */
  lastError?(): string | null;
  /**
   * Told when one of the logger's files cannot be written, reopened or
   * rotated, besides stderr: set once serving (the fault policy, which
   * writes it to the main level's log).
   */
  onFileError?: (path: string, message: string) => void;
  /** Closes every sink, each once. */
  close(): void;
}

/** Options for {@linkcode createLogger}. */
export interface LoggerOptions {
  /** The error log. */
  errorLog: LineSink;
  /** The access log; `null` when off. */
  accessLog: LineSink | null;
  /**
   * The least severe level written.
   *
   * @default {"error"}
   */
  level?: LogLevel;
  /** @default {Deno.pid} */
  pid?: number;
  /**
   * The thread id printed after `#`. On Linux nginx prints `gettid()`, which
   * is the pid for the main thread that runs JavaScript here too; Windows'
   * `GetCurrentThreadId()` cannot be read without FFI, so 0 is printed there.
   *
   * @default {Deno.build.os === "windows" ? 0 : Deno.pid}
   */
  tid?: number;
  /** Clock, for tests. */
  now?: () => Date;
  /** The access log's `log_format`. @default {COMBINED} */
  accessFormat?: LogFormat;
  /**
   * Every access log a location may write to, by path (the default one may
   * be among them). A path not here writes to `accessLog`.
   */
  accessFiles?: ReadonlyMap<string, LineSink>;
  /** Some location's format reads fields beyond `combined`'s. @default {false} */
  accessNeedsFields?: boolean;
  /**
   * Some location's format or `if=` reads the request's fields when the
   * line is written. @default {false}
   */
  accessCopiesFields?: boolean;
  /**
   * Some location's format or `if=` reads `$request_length`.
   * @default {false}
   */
  accessCountsRequest?: boolean;
  /**
   * Some location's format or `if=` reads `$content_length`.
   * @default {false}
   */
  accessDiscardsBody?: boolean;
  /**
   * The main level's error logs (lines about no request go there); when
   * absent, `errorLog` at `level`.
   */
  errorLogs?: readonly ErrorTarget[];
  /**
   * Every error log any level writes to, by path (a file named by an
   * access log too is the same sink).
   */
  errorFiles?: ReadonlyMap<string, LineSink>;
}

/**
 * Creates the logger.
 *
 * @param options Sinks, level and identity.
 * @returns The logger.
 *
 * @example Usage
 * ```ts
 * import { createLogger } from "./logger.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const lines: string[] = [];
 * const logger = createLogger({
 *   errorLog: { write: (l: string) => lines.push(l) },
 *   accessLog: null,
 *   pid: 1,
 *   tid: 1,
 * });
 * logger.error({ level: "info", message: "hidden" });
 * logger.error({ level: "error", message: "shown" });
 * strictEqual(lines.length, 1);
 * ```
 */
export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? "error";
  const pid = options.pid ?? Deno.pid;
  const tid = options.tid ?? (Deno.build.os === "windows" ? 0 : Deno.pid);
  const now = options.now ?? (() => new Date());
  const format = options.accessFormat ?? COMBINED;
  const files = options.accessFiles ?? new Map<string, LineSink>();
  const errors = new ErrorLines({
    errorLog: options.errorLog,
    level,
    mainLogs: options.errorLogs ?? null,
    files: options.errorFiles ?? new Map<string, LineSink>(),
    format: (event) => formatErrorLogLine({ ...event, time: now(), pid, tid }),
  });
  return {
    error: (event) => errors.toMain(event),
    errorTo: (logs, event) => errors.toLevel(logs, event),
    lastError: () => errors.lastError,
    access(event) {
      if (format === COMBINED) {
        options.accessLog?.write(
          formatAccessLogLine({ ...event, time: now() }),
        );
        return;
      }
      options.accessLog?.write(formatLogLine(format, recordOf(event, now())));
    },
    accessTo(targets, event) {
      // One time and one record for every file, as nginx's one log phase.
      const time = now();
      let record: LogRecord | null = null;
      for (const target of targets) {
        // A file not opened by path (the built-in configuration's, tests'
        // one sink) is the default access log.
        const sink = files.get(target.path) ?? options.accessLog;
        if (sink === null) continue;
        record ??= recordOf(event, time);
        const condition = target.condition;
        if (condition && event.vars !== undefined) {
          const value = condition.evaluate(event.vars);
          if (value === "" || value === "0") continue;
        }
        sink.write(formatLogLine(target.format, record));
      }
    },
    accessEnabled: options.accessLog !== null || files.size > 0,
    accessNeedsFields: format !== COMBINED ||
      (options.accessNeedsFields ?? false),
    accessCopiesFields: format.readsFields ||
      (options.accessCopiesFields ?? false),
    accessCountsRequest: format.readsLength ||
      (options.accessCountsRequest ?? false),
    accessDiscardsBody: format.readsBodyLength ||
      (options.accessDiscardsBody ?? false),
    close() {
      // A file named by several logs is closed once.
      const sinks = new Set([...errors.sinks(), ...files.values()]);
      if (options.accessLog !== null) sinks.add(options.accessLog);
      for (const sink of sinks) sink.close?.();
    },
  };
}

const NO_FIELDS: HeaderReader = { get: () => null };

/**
 * The record a `log_format` reads, from an access event; the request's
 * variables are given it, and it them (their log phase's values).
 */
function recordOf(event: AccessEvent, time: Date): LogRecord {
  const record: LogRecord = {
    time,
    startMs: event.startMs ?? time.getTime(),
    remoteAddr: event.remoteAddr,
    remoteUser: event.remoteUser,
    request: event.request,
    requestLength: event.requestLength ?? 0,
    // Without the kept fields, `combined`'s two come from the event.
    headers: event.headers ?? {
      get: (name) =>
        (name === "referer"
          ? event.referrer
          : name === "user-agent"
          ? event.userAgent
          : undefined) ?? null,
    },
    connection: event.connection ?? 0,
    connectionRequests: event.connectionRequests ?? 0,
    pipelined: false,
    status: event.status,
    bodyBytesSent: event.bodyBytesSent,
    bytesSent: event.bodyBytesSent,
    sent: event.sent,
    responseHeaders: event.sent !== undefined
      ? sentFields(event.sent)
      : event.responseHeaders ?? NO_FIELDS,
    ...(event.upstream === undefined ? {} : { upstream: event.upstream }),
    vars: event.vars,
  };
  if (event.vars !== undefined) event.vars.log = record;
  return record;
}
