/**
 * A directive's value compiled once: a level inherits its parent's
 * directive object, so every location below reads the same one, and its
 * refusal is said once.
 *
 * @module
 */

import {
  compileValue,
  type ComplexValue,
  constantValue,
  ValueError,
  type VariableScope,
} from "../engine/mod.ts";
import type { Directive } from "./parser.ts";

/** What compiling a value needs: the names known, and where a refusal goes. */
export interface DirectiveValuesContext {
  /** Variables the file defines (`map`, `geo`, `set`). */
  scope: VariableScope;
  /** Records an `[emerg]` for the directive. */
  fail(d: Directive | null, message: string): void;
}

/** Compiled values by the directive that wrote them. */
export class DirectiveValues {
  readonly #values = new WeakMap<Directive, ComplexValue>();
  readonly #ctx: DirectiveValuesContext;

  /** @param ctx Names and failures. */
  constructor(ctx: DirectiveValuesContext) {
    this.#ctx = ctx;
  }

  /**
   * The value of a directive's argument, compiled the first time; a value
   * that does not compile is refused and read as its text.
   *
   * @param d The directive.
   * @param text Its argument.
   * @returns The compiled value.
   */
  get(d: Directive, text: string): ComplexValue {
    const known = this.#values.get(d);
    if (known !== undefined) return known;
    let value: ComplexValue;
    try {
      value = compileValue(text, this.#ctx.scope);
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      this.#ctx.fail(d, error.message);
      value = constantValue(text);
    }
    this.#values.set(d, value);
    return value;
  }
}
