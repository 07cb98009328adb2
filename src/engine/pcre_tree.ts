/**
 * The tree a PCRE2 pattern is read into (pcre_parse.ts) and written from
 * as JavaScript (regex.ts), and the refusal of a pattern.
 *
 * @module
 */

import type { ByteSet } from "./pcre_sets.ts";

/** A node of a parsed expression. */
export type PcreNode =
  /**
   * `code`: PCRE2's length for it (a type or `.` 1, a char 2, a class 33;
   * pcre_size.ts), 2 when absent.
   */
  | { kind: "set"; set: ByteSet; code?: number }
  /** A char above 0x7F written in the pattern: its UTF-8 bytes in nginx. */
  | { kind: "text"; code: number }
  /**
   * `code`: PCRE2's length where it compiles the sequence as one item of
   * its own (a possessive repeat, an atomic group, `[[:<:]]`).
   */
  | { kind: "seq"; items: PcreNode[]; code?: number }
  | { kind: "alt"; branches: PcreNode[] }
  | {
    kind: "group";
    capture: number | null;
    name: string | null;
    body: PcreNode;
  }
  | { kind: "look"; ahead: boolean; negative: boolean; body: PcreNode }
  | { kind: "repeat"; body: PcreNode; min: number; max: number; lazy: boolean }
  /** `^`/`\A`/`\G`, `\z`, `$`/`\Z` (end or before a final newline), `\b`, `\B`. */
  | { kind: "anchor"; which: "start" | "end" | "dollar" | "b" | "B" }
  | { kind: "backref"; group: number }
  /** JavaScript source with its least width (`\R`). */
  | { kind: "raw"; source: string; min: number };

/** A refusal: PCRE2's own (`unsupported` false) or the gateway's. */
export class PcreError extends Error {
  /** Offset in the pattern PCRE2 names (`at "…"`), or `null`. */
  readonly at: number | null;
  /** PCRE2 accepts the pattern; JavaScript cannot run it as PCRE2 does. */
  readonly unsupported: boolean;
  /**
   * @param message What is wrong.
   * @param at The offset named, or `null` (the end).
   * @param unsupported A construct the gateway refuses, not PCRE2.
   */
  constructor(message: string, at: number | null, unsupported = false) {
    super(message);
    this.at = at;
    this.unsupported = unsupported;
  }
}

/** Refuses as PCRE2 refuses. */
export const fail = (message: string, at: number | null): never => {
  throw new PcreError(message, at);
};

/** Refuses what PCRE2 takes and JavaScript cannot run the same way. */
export const unsupported = (message: string, at: number | null): never => {
  throw new PcreError(message, at, true);
};

/**
 * Where refusals of what PCRE2 takes wait while the pattern is read: a
 * refusal of PCRE2's own further on comes first, as nginx's `[emerg]`
 * names it.
 */
export interface Deferred {
  /** The first refusal waiting, or `null`. */
  later: PcreError | null;
}

/** Refuses, once the whole pattern is read, what JavaScript cannot run as PCRE2 does. */
export const defer = (
  sink: Deferred,
  message: string,
  at: number | null,
): void => {
  sink.later ??= new PcreError(message, at, true);
};
