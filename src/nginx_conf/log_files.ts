/**
 * The files one log directive (`access_log`, `error_log`) opens across a
 * configuration: each path once, however many levels name it, and a bound
 * on how many, since each stays open for the life of the process.
 *
 * @module
 */

import type { Directive } from "./parser.ts";

/** The files of one log directive, first seen first, at most `max`. */
export class LogFileSet {
  readonly #paths = new Set<string>();
  readonly #name: "access_log" | "error_log";
  readonly #max: number;
  readonly #fail: (d: Directive, message: string) => void;

  /**
   * @param name The directive.
   * @param max How many files it may open.
   * @param fail Refuses a directive past the bound.
   */
  constructor(
    name: "access_log" | "error_log",
    max: number,
    fail: (d: Directive, message: string) => void,
  ) {
    this.#name = name;
    this.#max = max;
    this.#fail = fail;
  }

  /** Every file, absolute, first seen first. */
  get files(): readonly string[] {
    return [...this.#paths];
  }

  /**
   * Counts a file a level names; one past the bound is refused (a
   * default, named by no directive, is always counted).
   *
   * @param d The directive naming it, or `null` for the default.
   * @param path The absolute path.
   * @returns The path.
   */
  add(d: Directive | null, path: string): string {
    if (this.#paths.has(path)) return path;
    if (this.#paths.size >= this.#max && d !== null) {
      this.#fail(
        d,
        `"${this.#name} ${path}" is not supported: the gateway opens at most ${this.#max} ${
          this.#name.replace("_", " ")
        } files`,
      );
      return path;
    }
    this.#paths.add(path);
    return path;
  }
}
