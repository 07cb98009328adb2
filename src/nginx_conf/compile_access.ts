/**
 * The access settings of a level: `auth_basic`, `auth_basic_user_file`
 * (`ngx_http_auth_basic_module`, each inherited on its own) and `satisfy`
 * (`ngx_http_core_module`), with the level's limits
 * (`compile_limits.ts`), as the engine's model takes them.
 *
 * @module
 */

import { type AuthBasicConf, UserFileCache } from "../access/mod.ts";
import { type VariableScope } from "../engine/mod.ts";
import type { Level } from "./compile_level.ts";
import { LimitsCompiler, type LimitSettings } from "./compile_limits.ts";
import type { Directive } from "./parser.ts";
import { DirectiveValues } from "./directive_values.ts";

/** A level's access and preaccess settings. */
export interface AccessSettings extends LimitSettings {
  /** `auth_basic` with `auth_basic_user_file`, or `null` when either is unset. */
  authBasic: AuthBasicConf | null;
  /** `satisfy`. */
  satisfy: "all" | "any";
}

/** What the access compiler reports to and reads. */
export interface AccessCompileContext {
  /** Variable names. */
  scope: VariableScope;
  /** The folder of nginx.conf: a relative user file is taken from it. */
  confPrefix: string;
  /** Refuses a directive; `null` for nginx's messages without a place. */
  fail(d: Directive | null, message: string): void;
}

/** Compiles the access settings of every level of one configuration. */
export class AccessCompiler {
  readonly #ctx: AccessCompileContext;
  readonly #limits: LimitsCompiler;
  /** One cache for every user file of the configuration. */
  readonly #users = new UserFileCache();
  readonly #values: DirectiveValues;
  readonly #reported = new Set<Directive>();

  /** @param ctx Names, the conf prefix, failures. */
  constructor(ctx: AccessCompileContext) {
    this.#ctx = ctx;
    this.#values = new DirectiveValues(ctx);
    this.#limits = new LimitsCompiler(ctx);
  }

  /**
   * Reads the http level's `limit_req_zone` and `limit_conn_zone`.
   *
   * @param block The http block's directives.
   */
  zones(block: readonly Directive[]): void {
    this.#limits.zones(block);
  }

  /**
   * A level's settings.
   *
   * @param level The level.
   * @returns The settings.
   */
  settings(level: Level): AccessSettings {
    return {
      authBasic: this.#authBasic(level),
      satisfy: this.#satisfy(level),
      ...this.#limits.settings(level),
    };
  }

  /** nginx's checks at the end of the configuration (zones named but not declared). */
  finish(): void {
    this.#limits.finish();
  }

  #authBasic(level: Level): AuthBasicConf | null {
    const realmDirective = level.last("auth_basic");
    const fileDirective = level.last("auth_basic_user_file");
    const realm = realmDirective === undefined
      ? null
      : this.#values.get(realmDirective, realmDirective.args[0]!);
    const userFile = fileDirective === undefined
      ? null
      : this.#values.get(fileDirective, fileDirective.args[0]!);
    if (realm === null || userFile === null) return null;
    return {
      realm,
      userFile,
      confPrefix: this.#ctx.confPrefix,
      users: this.#users,
    };
  }

  #satisfy(level: Level): "all" | "any" {
    const d = level.last("satisfy");
    if (d === undefined) return "all";
    const text = d.args[0]!.toLowerCase();
    if (text === "all" || text === "any") return text;
    this.#once(d, `invalid value "${d.args[0]}"`);
    return "all";
  }

  /** A message once per directive, though every level below reads it. */
  #once(d: Directive, message: string): void {
    if (this.#reported.has(d)) return;
    this.#reported.add(d);
    this.#ctx.fail(d, message);
  }
}
