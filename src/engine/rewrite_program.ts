/**
 * The rewrite module's compiled form: a level's `rewrite`, `return`, `set`,
 * `break` and `if` directives as a program of operations
 * (`ngx_http_rewrite_module.c`), compiled by `rewrite_compile.ts` and run
 * by `rewrite.ts`.
 *
 * @module
 */

import { type ComplexValue, constantValue } from "./complex_value.ts";
import type { LocationConf } from "./model.ts";

/** An `if` condition. */
export type Condition =
  | { kind: "value"; value: ComplexValue }
  | { kind: "compare"; value: ComplexValue; negate: boolean; to: ComplexValue }
  | { kind: "regex"; value: ComplexValue; negate: boolean; regex: RegExp }
  | {
    kind: "file";
    value: ComplexValue;
    negate: boolean;
    test: "f" | "d" | "e" | "x";
  };

/** One compiled directive. */
export type RewriteOp =
  | { op: "return"; code: number; value: ComplexValue | null }
  | {
    op: "rewrite";
    regex: RegExp;
    /** The replacement up to its first `?`: the new `$uri`. */
    path: ComplexValue;
    /** After that `?`: the new `$args`; `null` when there is no `?`. */
    args: ComplexValue | null;
    /** The request's `$args` are kept (the replacement does not end in `?`). */
    addArgs: boolean;
    flag: "last" | "break" | "redirect" | "permanent" | null;
    /** The replacement is an absolute URL: always a redirect. */
    external: boolean;
  }
  | { op: "set"; name: string; value: ComplexValue }
  | { op: "break" }
  | {
    op: "if";
    condition: Condition;
    /** The `if` block's own level (its settings and nested program). */
    location: LocationConf;
  };

/** A level's rewrite directives in order. */
export interface RewriteProgram {
  /** The directives. */
  ops: readonly RewriteOp[];
}

/** A program of no directives, for levels without any. */
export const EMPTY_PROGRAM: RewriteProgram = { ops: [] };

/** `constantValue` for callers building programs by hand. */
export { constantValue };
