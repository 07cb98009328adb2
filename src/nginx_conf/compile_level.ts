/**
 * One level of an nginx.conf (http, server, location, if) while it is
 * compiled: the directives it sets itself, and its parent, so each setting
 * is read from the nearest level that sets it — nginx's `merge_loc_conf`,
 * where a level that sets an array directive (`proxy_set_header`,
 * `add_header`, `error_page`, `access_log`) replaces the parent's whole list.
 *
 * @module
 */

import type { Directive } from "./parser.ts";

/** Directives that a level never takes from its parent. */
const NOT_INHERITED = new Set([
  "try_files",
  "proxy_pass",
  "fastcgi_pass",
  "internal",
  "rewrite",
  "return",
  "set",
  "break",
  "if",
  "location",
]);

/** A level's own directives and its parent. */
export class Level {
  readonly #own = new Map<string, Directive[]>();

  /**
   * @param parent The enclosing level, `null` for http.
   * @param block The level's directives.
   */
  constructor(
    readonly parent: Level | null,
    readonly block: readonly Directive[],
  ) {
    for (const d of block) {
      const list = this.#own.get(d.name);
      if (list) list.push(d);
      else this.#own.set(d.name, [d]);
    }
  }

  /** The directives of a name at this level only. */
  own(name: string): readonly Directive[] {
    return this.#own.get(name) ?? [];
  }

  /**
   * The directives of a name from the nearest level that sets it (this
   * one's if it does); never inherited for per-level directives.
   */
  get(name: string): readonly Directive[] {
    const mine = this.#own.get(name);
    if (mine !== undefined) return mine;
    if (NOT_INHERITED.has(name) || this.parent === null) return [];
    return this.parent.get(name);
  }

  /** The last directive of a name in effect, if any. */
  last(name: string): Directive | undefined {
    const list = this.get(name);
    return list[list.length - 1];
  }

  /**
   * The directives of the nearest level that sets any of these names, in
   * file order: lists written with two names (`allow`/`deny`).
   */
  nearestList(names: readonly string[]): readonly Directive[] {
    const mine = this.block.filter((d) => names.includes(d.name));
    if (mine.length > 0) return mine;
    return this.parent?.nearestList(names) ?? [];
  }

  /** The nearest of several names, for directives that merge as one (`root`/`alias`). */
  nearest(names: readonly string[]): Directive | undefined {
    for (const name of names) {
      const mine = this.#own.get(name);
      if (mine !== undefined) return mine[mine.length - 1];
    }
    return this.parent?.nearest(names);
  }
}
