/**
 * What every stage of compiling an nginx.conf shares with the compiler
 * (`compile.ts`): where refusals and warnings are collected, with their
 * places, the check every directive passes, and values compiled in the
 * configuration's variable scope. One interface, so that each stage
 * (variables, upstreams, servers, locations) is a file of its own.
 *
 * @module
 */

import type { ComplexValue } from "../engine/mod.ts";
import type { Directive } from "./parser.ts";

/** The compiler's services to a stage of compiling. */
export interface CompileContext {
  /**
   * Refuses a directive, or the file itself (`null`): the message is
   * collected with its place, each line once.
   */
  fail(d: Directive | null, message: string): void;
  /** Warns about a directive; the message is collected with its place. */
  warn(d: Directive, message: string): void;
  /** The directives of a block the engine reads, each checked once. */
  accepted(block: readonly Directive[]): Directive[];
  /**
   * A value with variables, compiled in the configuration's scope; a
   * value that does not compile is refused and kept as constant text.
   */
  value(d: Directive, text: string): ComplexValue;
}
