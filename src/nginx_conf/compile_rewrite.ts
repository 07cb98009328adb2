/**
 * A level's rewrite-module directives (`rewrite`, `return`, `set`, `break`,
 * `if`) compiled into the program the rewrite phases run, in file order.
 *
 * @module
 */

import {
  compileCondition,
  compileReturn,
  compileRewrite,
  compileValue,
  type LocationConf,
  type RewriteOp,
  type RewriteProgram,
  ValueError,
  Variables,
  type VariableScope,
} from "../engine/mod.ts";
import type { Directive } from "./parser.ts";

const REWRITE_DIRECTIVES = new Set(["rewrite", "return", "set", "break", "if"]);

/** Whether a directive belongs to the rewrite module. */
export function isRewriteDirective(d: Directive): boolean {
  return REWRITE_DIRECTIVES.has(d.name);
}

/** What compiling a program needs. */
export interface ProgramContext {
  /** Variable names. */
  scope: VariableScope;
  /** Refuses a directive. */
  fail(d: Directive, message: string): void;
  /** Compiles an `if` block's own level. */
  ifLevel(d: Directive): LocationConf;
}

/**
 * Compiles a level's rewrite directives.
 *
 * @param directives The level's rewrite directives in order.
 * @param ctx Names, failures, `if` levels.
 * @returns The program, or `null` when the level has none.
 */
export function compileProgram(
  directives: readonly Directive[],
  ctx: ProgramContext,
): RewriteProgram | null {
  if (directives.length === 0) return null;
  const ops: RewriteOp[] = [];
  for (const d of directives) {
    try {
      switch (d.name) {
        case "return":
          ops.push(compileReturn(d.args, ctx.scope));
          break;
        case "rewrite":
          ops.push(compileRewrite(d.args, ctx.scope));
          break;
        case "break":
          ops.push({ op: "break" });
          break;
        case "set": {
          const name = d.args[0]!;
          if (!name.startsWith("$")) {
            ctx.fail(d, `invalid variable name "${name}"`);
            break;
          }
          const key = name.slice(1).toLowerCase();
          const refusal = Variables.assignRefusal(name.slice(1));
          if (refusal !== null) {
            ctx.fail(d, refusal);
            break;
          }
          ops.push({
            op: "set",
            name: key,
            value: compileValue(d.args[1]!, ctx.scope),
          });
          break;
        }
        case "if":
          ops.push({
            op: "if",
            condition: compileCondition(d.args, ctx.scope),
            location: ctx.ifLevel(d),
          });
          break;
      }
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      ctx.fail(d, error.message);
    }
  }
  return { ops };
}
