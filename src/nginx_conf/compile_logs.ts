/**
 * The logs of a configuration. `access_log` as `ngx_http_log_module`
 * merges it: several per level, a level that sets any replaces its
 * parent's list, `off` turns the level's logging off, the format named by
 * the second argument (`combined` when none), `if=` skips the line when its
 * value is empty or `0`. Every file is opened once at start (a path with
 * variables is refused) and at most {@linkcode MAX_ACCESS_LOG_FILES} are.
 * `error_log` as `ngx_http_core_error_log` and `ngx_log_set_log` read it: a
 * file (or `stderr`) and a level (`error` when none), several per level, a
 * level that sets any replaces its parent's list, and a level without one
 * has the main level's (nginx's `logs/error.log` at `error` when the main
 * level has none either). nginx has no `off` for it: `error_log off` is a
 * file named `off`, as there (with a warning).
 *
 * @module
 */

import { pathProblem } from "../config/mod.ts";
import {
  compileValue,
  type ComplexValue,
  type LocationConf,
  ValueError,
  type VariableScope,
} from "../engine/mod.ts";
import {
  COMBINED,
  type ErrorTarget,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
} from "../log/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { prefixed } from "./paths.ts";

/** The most access log files a configuration opens (each holds a handle for months). */
export const MAX_ACCESS_LOG_FILES = 32;

/** The most error log files a configuration opens (each holds a handle for months). */
export const MAX_ERROR_LOG_FILES = 32;

/** What the checks report to and read. */
export interface LogChecks {
  /** Refuses a directive. */
  fail(d: Directive, message: string): void;
  /** Warns about a directive. */
  warn(d: Directive, message: string): void;
  /** The `log_format` of this name, if any. */
  format(name: string): LogFormat | undefined;
  /** Variable names, for `if=`. */
  scope(): VariableScope;
  /** The nginx prefix relative paths start at. */
  prefix(): string;
}

type AccessLogs = LocationConf["accessLogs"];

/** Compiles every level's logs and keeps the files they open. */
export class LogsSeen {
  #checked = new Set<Directive>();
  #lists = new WeakMap<readonly Directive[], AccessLogs>();
  #errorLists = new WeakMap<readonly Directive[], readonly ErrorTarget[]>();
  #files = new Set<string>();
  #errorFiles = new Set<string>();
  #fields = false;
  #defaultList: AccessLogs | null = null;
  #defaultErrorList: readonly ErrorTarget[] | null = null;
  #floor: LogLevel = "emerg";

  /** @param checks Where findings go, and what they read. */
  constructor(readonly checks: LogChecks) {}

  /** Every access log file, absolute, first seen first. */
  get files(): readonly string[] {
    return [...this.#files];
  }

  /** Every error log file, absolute (`stderr` as is), first seen first. */
  get errorFiles(): readonly string[] {
    return [...this.#errorFiles];
  }

  /** The least severe level of any error log compiled so far. */
  get errorFloor(): LogLevel {
    return this.#floor;
  }

  /** Some access log's format reads fields beyond `combined`'s. */
  get needsFields(): boolean {
    return this.#fields;
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

  /**
   * A level's access logs: its own `access_log` lines or the nearest
   * parent's, `logs/access.log combined` when no level has any; empty for
   * `off`.
   *
   * @param level The level.
   * @returns The logs its requests write to.
   */
  accessLogs(level: Level): AccessLogs {
    const list = level.get("access_log");
    if (list.length === 0) {
      this.#defaultList ??= [{
        path: this.#file(
          null,
          prefixed(this.checks.prefix(), "logs/access.log"),
        ),
        format: COMBINED,
        condition: null,
      }];
      return this.#defaultList;
    }
    const known = this.#lists.get(list);
    if (known !== undefined) return known;
    const logs: AccessLogs[number][] = [];
    // ngx_http_log_set_log: `off` anywhere in the level turns it off.
    const off = list.some((d) => d.args[0] === "off");
    for (const d of list) {
      const log = this.#accessLog(d);
      if (log !== null && !off) logs.push(log);
    }
    this.#lists.set(list, logs);
    return logs;
  }

  #file(d: Directive | null, path: string): string {
    if (!this.#files.has(path)) {
      if (this.#files.size >= MAX_ACCESS_LOG_FILES && d !== null) {
        this.checks.fail(
          d,
          `"access_log ${path}" is not supported: the gateway opens at most ${MAX_ACCESS_LOG_FILES} access log files`,
        );
        return path;
      }
      this.#files.add(path);
    }
    return path;
  }

  #accessLog(d: Directive): AccessLogs[number] | null {
    const [file = "", name, ...params] = d.args;
    if (file === "off") {
      if (d.args.length > 1) {
        this.checks.fail(d, `invalid parameter "${d.args[1]}"`);
      }
      return null;
    }
    const problem = pathProblem(file);
    if (problem !== null) {
      this.checks.fail(d, `"access_log ${file}" is not supported: ${problem}`);
      return null;
    }
    if (/\$[A-Za-z_{]/.test(file)) {
      this.checks.fail(
        d,
        `"access_log ${file}" is not supported: the gateway opens its log files at start`,
      );
      return null;
    }
    if (/^(syslog:|memory:)/.test(file)) {
      this.checks.fail(
        d,
        `"access_log ${file}" is not supported: the gateway writes a file`,
      );
      return null;
    }
    const format = this.checks.format(name ?? "combined");
    if (format === undefined) {
      this.checks.fail(d, `unknown log format "${name}"`);
      return null;
    }
    let condition: ComplexValue | null = null;
    for (const param of params) {
      if (param.startsWith("if=")) {
        condition = this.#condition(d, param.slice(3));
      } else if (/^(buffer|flush)=/.test(param)) {
        this.#once(d, () =>
          this.checks.warn(
            d,
            `"access_log … ${param}" is ignored: the gateway writes each line at once`,
          ));
      } else {
        this.checks.fail(d, `"access_log … ${param}" is not supported`);
      }
    }
    if (format !== COMBINED) this.#fields = true;
    return {
      path: this.#file(d, prefixed(this.checks.prefix(), file)),
      format,
      condition,
    };
  }

  #condition(d: Directive, text: string): ComplexValue | null {
    try {
      return compileValue(text, this.checks.scope());
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      this.checks.fail(d, error.message);
      return null;
    }
  }

  #once(d: Directive, report: () => void): void {
    if (this.#checked.has(d)) return;
    this.#checked.add(d);
    report();
  }

  #lower(level: LogLevel): void {
    if (LOG_LEVELS.indexOf(level) > LOG_LEVELS.indexOf(this.#floor)) {
      this.#floor = level;
    }
  }

  #errorFile(d: Directive | null, path: string): string {
    if (!this.#errorFiles.has(path)) {
      if (this.#errorFiles.size >= MAX_ERROR_LOG_FILES && d !== null) {
        this.checks.fail(
          d,
          `"error_log ${path}" is not supported: the gateway opens at most ${MAX_ERROR_LOG_FILES} error log files`,
        );
        return path;
      }
      this.#errorFiles.add(path);
    }
    return path;
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
