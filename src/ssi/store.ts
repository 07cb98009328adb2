/**
 * The SSI variables of one main request, bounded: what a page's commands
 * and its includes' `set`, named captures and `include set=` keep, within
 * {@linkcode MAX_STATE} bytes in all, and the captures of the last regex.
 *
 * @module
 */

import { SsiBlocks } from "./blocks.ts";

/** The most bytes of `set` variables, and of one evaluated value. */
export const MAX_STATE = 65536;

/** nginx's words for a variable past {@linkcode MAX_STATE}. */
export const STATE_EXCEEDED = `the SSI variables exceed ${MAX_STATE} bytes`;

/**
 * The SSI variables, their bytes and the last regex's captures of one
 * main request: nginx keeps them in the main request's context
 * (`ngx_http_get_module_ctx(r->main, …)`), so a page and its includes
 * see and set the same ones, within one {@linkcode MAX_STATE}.
 *
 * @example Usage
 * ```ts
 * import { SsiStore } from "./store.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const store = new SsiStore();
 * strictEqual(store.variables.size, 0);
 * ```
 */
export class SsiStore {
  /** `set` variables (and named captures), by lower-case name. */
  readonly variables: Map<string, string> = new Map();
  /** Their names' and values' bytes. */
  bytes = 0;
  /** The numbered captures of the last `if` regex. */
  captures: readonly string[] = [];
  /** The `block`s, for `include … stub=`. */
  readonly blocks: SsiBlocks = new SsiBlocks();

  /**
   * Sets a variable within the bound: its name's and value's bytes with
   * every other's at most {@linkcode MAX_STATE}.
   *
   * @param name The variable, lower case.
   * @param value Its value, a byte string.
   * @returns Whether it was set (`false`: past the bound, nothing changed).
   */
  assign(name: string, value: string): boolean {
    const old = this.variables.get(name);
    const bytes = this.bytes -
      (old === undefined ? 0 : name.length + old.length) +
      name.length + value.length;
    if (bytes > MAX_STATE) return false;
    this.bytes = bytes;
    this.variables.set(name, value);
    return true;
  }
}
