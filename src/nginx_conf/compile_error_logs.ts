/**
 * The `error_log` of every level, as `ngx_http_core_error_log` and
 * `ngx_log_set_log` read it: a file (or `stderr`) and a level (`error` when
 * none), several per level (kept most verbose first, as `ngx_log_insert`),
 * a level that sets any replaces its parent's list, and a level without one
 * has its parent's, the main level's last (nginx's `logs/error.log` at
 * `error` when the main level has none either; `http`'s is not the main
 * level's). nginx has no `off` here: `error_log off` is a file named `off`,
 * as there (with a warning). Every file is opened once at start and at most
 * {@linkcode MAX_ERROR_LOG_FILES} are.
 *
 * @module
 */

import { pathProblem } from "../config/mod.ts";
import { type ErrorTarget, LOG_LEVELS, type LogLevel } from "../log/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { LogFileSet } from "./log_files.ts";
import { prefixed } from "./paths.ts";

/** The most error log files a configuration opens (each holds a handle for months). */
export const MAX_ERROR_LOG_FILES = 32;

/** What the checks report to and read. */
export interface ErrorLogChecks {
  /** Refuses a directive. */
  fail(d: Directive, message: string): void;
  /** Warns about a directive. */
  warn(d: Directive, message: string): void;
  /** The nginx prefix relative paths start at. */
  prefix(): string;
}

/** Compiles every level's error logs and keeps the files they open. */
export class ErrorLogsSeen {
  #checked = new Set<Directive>();
  #errorLists = new WeakMap<readonly Directive[], readonly ErrorTarget[]>();
  readonly #errorFiles: LogFileSet;
  #defaultErrorList: readonly ErrorTarget[] | null = null;
  #floor: LogLevel = "emerg";

  /** @param checks Where findings go, and what they read. */
  constructor(readonly checks: ErrorLogChecks) {
    this.#errorFiles = new LogFileSet(
      "error_log",
      MAX_ERROR_LOG_FILES,
      (d, message) => checks.fail(d, message),
    );
  }

  /** Every error log file, absolute (`stderr` as is), first seen first. */
  get files(): readonly string[] {
    return this.#errorFiles.files;
  }

  /** The least severe level of any error log compiled so far. */
  get floor(): LogLevel {
    return this.#floor;
  }

  /**
   * A level's error logs: its own `error_log` lines or the nearest
   * parent's (the main level is the last parent), nginx's
   * `logs/error.log` at `error` when no level has any. Levels that inherit
   * one list get the same array.
   *
   * @param level The level.
   * @returns The logs its requests' lines go to.
   */
  errorLogs(level: Level): readonly ErrorTarget[] {
    const list = level.get("error_log");
    if (list.length === 0) {
      this.#defaultErrorList ??= [{
        path: this.#errorFile(
          null,
          prefixed(this.checks.prefix(), "logs/error.log"),
        ),
        level: "error",
      }];
      this.#lower("error");
      return this.#defaultErrorList;
    }
    const known = this.#errorLists.get(list);
    if (known !== undefined) return known;
    const logs: ErrorTarget[] = [];
    for (const d of list) {
      const log = this.#errorLog(d);
      if (log === null) continue;
      logs.push(log);
      this.#lower(log.level);
    }
    // ngx_log_insert: most verbose first, in file order among equals.
    const rank = (log: ErrorTarget) => LOG_LEVELS.indexOf(log.level);
    logs.sort((a, b) => rank(b) - rank(a));
    this.#errorLists.set(list, logs);
    return logs;
  }

  #lower(level: LogLevel): void {
    if (LOG_LEVELS.indexOf(level) > LOG_LEVELS.indexOf(this.#floor)) {
      this.#floor = level;
    }
  }

  #errorFile(d: Directive | null, path: string): string {
    return this.#errorFiles.add(d, path);
  }

  /** One `error_log` (ngx_log_set_log, ngx_log_set_levels), checked once. */
  #errorLog(d: Directive): ErrorTarget | null {
    const [file = "", second] = d.args;
    const report = !this.#checked.has(d);
    this.#checked.add(d);
    const fail = (message: string) => {
      if (report) this.checks.fail(d, message);
      return null;
    };
    if (/^(syslog:|memory:)/.test(file) || d.args.length > 2) {
      return fail(
        `"error_log ${
          d.args.join(" ")
        }" is not supported: the gateway writes a file`,
      );
    }
    const level = second ?? "error";
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      return fail(`invalid log level "${level}"`);
    }
    if (file === "stderr") {
      return { path: this.#errorFile(d, file), level: level as LogLevel };
    }
    const problem = pathProblem(file);
    if (problem !== null) {
      return fail(`"${d.name} ${file}" is not supported: ${problem}`);
    }
    if (file === "off" && report) {
      this.checks.warn(
        d,
        `"error_log off" writes to a file named "off", as nginx does: nginx's error log cannot be turned off`,
      );
    }
    return {
      path: this.#errorFile(d, prefixed(this.checks.prefix(), file)),
      level: level as LogLevel,
    };
  }
}
