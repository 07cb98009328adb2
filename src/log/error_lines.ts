/**
 * Which error logs take a line, as `ngx_log_error_core` walks the list a
 * line's log points to: the main level's for a line about no request, the
 * level handling the request for one about it (nginx switches
 * `r->connection->log` to it), each file at its own level, the line
 * formatted once for all of them.
 *
 * @module
 */

import {
  type ErrorLogEntry,
  isLevelEnabled,
  type LogLevel,
} from "./error_log.ts";

/** Where formatted lines go: a `LogFile` or, in tests, an array. */
export interface LineSink {
  /** Writes one line, without its newline. */
  write(line: string): unknown;
  /** Releases the sink. */
  close?(): void;
}

/** An error-log entry before the logger adds time, pid and tid. */
export type ErrorEvent = Omit<ErrorLogEntry, "time" | "pid" | "tid">;

/**
 * One error log of a level (`error_log FILE [LEVEL]`): a file, absolute, or
 * `stderr`, and the least severe level it is written at.
 */
export interface ErrorTarget {
  /** The file, as opened by path (`LoggerOptions.errorFiles`), or `stderr`. */
  readonly path: string;
  /** The least severe level written to it. */
  readonly level: LogLevel;
}

/** What {@linkcode ErrorLines} writes to. */
export interface ErrorLinesOptions {
  /** The main log when no list is given, and for a file not opened by path. */
  errorLog: LineSink;
  /** `errorLog`'s level. */
  level: LogLevel;
  /** The main level's logs; `null`: `errorLog` at `level`. */
  mainLogs: readonly ErrorTarget[] | null;
  /** Every error log file opened, by path. */
  files: ReadonlyMap<string, LineSink>;
  /** Formats an event as a line (time, pid and tid added). */
  format(event: ErrorEvent): string;
}

/** Writes error lines to the files of a level, each at its own level. */
export class ErrorLines {
  readonly #options: ErrorLinesOptions;
  /** The last line written at `error` or more severe; `null` before one. */
  lastError: string | null = null;

  /** @param options The sinks and the formatter. */
  constructor(options: ErrorLinesOptions) {
    this.#options = options;
  }

  /**
   * Writes a line about no request to the main level's logs.
   *
   * @param event The line's parts.
   */
  toMain(event: ErrorEvent): void {
    const { mainLogs } = this.#options;
    if (mainLogs === null) this.#toDefault(event, null);
    else this.#toList(mainLogs, event, true);
  }

  /**
   * Writes a line about a request to the logs of the level handling it; a
   * file not opened by path (the built-in configuration's, tests' one
   * sink) stands for the main level's logs.
   *
   * @param logs The level's list.
   * @param event The line's parts.
   */
  toLevel(logs: readonly ErrorTarget[], event: ErrorEvent): void {
    this.#toList(logs, event, false);
  }

  /** Every sink, each once. */
  sinks(): Set<LineSink> {
    return new Set([this.#options.errorLog, ...this.#options.files.values()]);
  }

  #toList(
    logs: readonly ErrorTarget[],
    event: ErrorEvent,
    main: boolean,
  ): void {
    let line: string | null = null;
    let unopened = false;
    // Each log of the list that takes the line's level (nginx keeps them
    // sorted and stops at the first that does not: the same set).
    for (const log of logs) {
      const sink = this.#options.files.get(log.path);
      if (sink === undefined) unopened = true;
      else if (isLevelEnabled(event.level, log.level)) {
        line = this.#write(sink, event, line);
      }
    }
    if (!unopened) return;
    if (main) this.#toDefault(event, line);
    else this.toMain(event);
  }

  #toDefault(event: ErrorEvent, line: string | null): void {
    if (isLevelEnabled(event.level, this.#options.level)) {
      this.#write(this.#options.errorLog, event, line);
    }
  }

  /** Writes one line, formatted once for every file that takes it. */
  #write(sink: LineSink, event: ErrorEvent, line: string | null): string {
    line ??= this.#options.format(event);
    sink.write(line);
    // Kept as written, so the built-in page needs no re-reading of a file.
    if (isLevelEnabled(event.level, "error")) this.lastError = line;
    return line;
  }
}
