/**
 * The logs of a configuration. `access_log` as `ngx_http_log_module`
 * merges it: several per level, a level that sets any replaces its
 * parent's list, `off` turns the level's logging off, the format named by
 * the second argument (`combined` when none), `if=` skips the line when its
 * value is empty or `0`. Every file is opened once at start (a path with
 * variables is refused) and at most {@linkcode MAX_ACCESS_LOG_FILES} are.
 * `error_log` is `compile_error_logs.ts`'s.
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
import { COMBINED, type LogFormat } from "../log/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { LogFileSet } from "./log_files.ts";
import { prefixed } from "./paths.ts";

/** The most access log files a configuration opens (each holds a handle for months). */
export const MAX_ACCESS_LOG_FILES = 32;

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
  /** Whether a value's variables may read the request's fields (`Variables.valueReadsFields`). */
  readsFields(text: string): boolean;
  /** The nginx prefix relative paths start at. */
  prefix(): string;
}

type AccessLogs = LocationConf["accessLogs"];

/** Compiles every level's logs and keeps the files they open. */
export class LogsSeen {
  #checked = new Set<Directive>();
  #lists = new WeakMap<readonly Directive[], AccessLogs>();
  readonly #files: LogFileSet;
  #fields = false;
  #copies = false;
  #counts = false;
  #discards = false;
  #defaultList: AccessLogs | null = null;

  /** @param checks Where findings go, and what they read. */
  constructor(readonly checks: LogChecks) {
    this.#files = new LogFileSet(
      "access_log",
      MAX_ACCESS_LOG_FILES,
      (d, message) => checks.fail(d, message),
    );
  }

  /** Every access log file, absolute, first seen first. */
  get files(): readonly string[] {
    return this.#files.files;
  }

  /** Some access log's format reads fields beyond `combined`'s. */
  get needsFields(): boolean {
    return this.#fields;
  }

  /**
   * Some access log's format or `if=` reads the request's fields when its
   * line is written: every request keeps a copy of them then.
   */
  get copiesFields(): boolean {
    return this.#copies;
  }

  /**
   * Some access log's format or `if=` names `$request_length` (a `map`
   * that reads it is not followed: such a line counts 0).
   */
  get countsRequest(): boolean {
    return this.#counts;
  }

  /**
   * Some access log's format or `if=` names `$content_length` (a `map`
   * that reads it is not followed).
   */
  get discardsBody(): boolean {
    return this.#discards;
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
    return this.#files.add(d, path);
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
    // A file named with variables is opened per request by nginx; one
    // whose only variables are the same for every request (nginx's
    // literal-`$` idiom, `${dollar}` of a geo with only a default) names
    // one file, opened at start.
    const path = /\$[A-Za-z_{]/.test(file) ? this.#constantPath(file) : file;
    if (path === null) {
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
    // A format beyond `combined`'s, or an `if=`, reads the request's
    // fields when the line is written: they are kept for it.
    if (format !== COMBINED || condition !== null) this.#fields = true;
    if (
      format.readsFields ||
      (condition !== null && this.checks.readsFields(condition.text))
    ) {
      this.#copies = true;
    }
    if (
      format.readsLength ||
      (condition !== null && /\$\{?request_length\b/i.test(condition.text))
    ) {
      this.#counts = true;
    }
    if (
      format.readsBodyLength ||
      (condition !== null && /\$\{?content_length\b/i.test(condition.text))
    ) {
      this.#discards = true;
    }
    return {
      path: this.#file(d, prefixed(this.checks.prefix(), path)),
      format,
      condition,
    };
  }

  /** The path a file with variables names, when it is the same for every request. */
  #constantPath(file: string): string | null {
    try {
      return compileValue(file, this.checks.scope(), true).constant;
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      return null;
    }
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
}
