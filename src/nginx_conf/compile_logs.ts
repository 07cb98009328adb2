/**
 * The logs of a configuration: the gateway writes one error log and one
 * access log, in nginx's `combined` format, so every level must resolve to
 * the same ones (per-location logs and `log_format` come with the log
 * formats). Checked for every level as it is compiled.
 *
 * @module
 */

import { pathProblem } from "../config/mod.ts";
import { LOG_LEVELS } from "../log/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";

/** What the checks report to. */
export interface LogChecks {
  /** Refuses a directive. */
  fail(d: Directive, message: string): void;
  /** Warns about a directive. */
  warn(d: Directive, message: string): void;
  /** Whether a `log_format` of this name exists. */
  knownFormat(name: string): boolean;
}

function text(list: readonly Directive[]): string {
  return list.map((d) => d.args.join(" ")).join(";");
}

/** Compares every level's logs with the first level's. */
export class LogsSeen {
  #first = new Map<string, string>();
  #checked = new Set<Directive>();

  /** @param checks Where findings go. */
  constructor(readonly checks: LogChecks) {}

  /**
   * Records a level's logs; a different list than the first level's is
   * refused.
   *
   * @param level The level.
   */
  record(level: Level): void {
    for (const name of ["error_log", "access_log"]) {
      const list = level.get(name);
      const seen = this.#first.get(name);
      // A level may turn its access log off (`location /health {
      // access_log off; }`): its requests write no line.
      const off = name === "access_log" && text(list) === "off";
      if (seen === undefined) this.#first.set(name, text(list));
      else if (seen !== text(list) && !off) {
        const d = list[0] ?? level.block[0];
        if (d !== undefined) {
          this.checks.fail(
            d,
            `a different "${name}" for a location or server is not supported: the gateway writes one`,
          );
        }
      }
      if (list.length > 1) {
        this.checks.fail(
          list[1]!,
          `a second "${name}" is not supported: the gateway writes one`,
        );
      }
      for (const d of list) this.#check(d);
    }
  }

  #check(d: Directive): void {
    if (this.#checked.has(d)) return;
    this.#checked.add(d);
    const [file = "", second, ...params] = d.args;
    const problem = file === "off" ? null : pathProblem(file);
    if (problem !== null) {
      this.checks.fail(d, `"${d.name} ${file}" is not supported: ${problem}`);
    }
    if (d.name === "error_log") {
      if (/^(stderr|syslog:|memory:)/.test(file) || d.args.length > 2) {
        this.checks.fail(
          d,
          `"error_log ${
            d.args.join(" ")
          }" is not supported: the gateway writes a file`,
        );
      }
      const level = second ?? "error";
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        this.checks.fail(d, `invalid log level "${level}"`);
      }
      return;
    }
    if (file === "off") return;
    if (second !== undefined && !this.checks.knownFormat(second)) {
      this.checks.fail(d, `unknown log format "${second}"`);
    }
    for (const param of params) {
      if (/^(buffer|flush)=/.test(param)) {
        this.checks.warn(
          d,
          `"access_log … ${param}" is ignored: the gateway writes each line at once`,
        );
      } else this.checks.fail(d, `"access_log … ${param}" is not supported`);
    }
  }
}
