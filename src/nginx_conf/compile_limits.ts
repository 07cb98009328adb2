/**
 * The preaccess settings of a level: `limit_req_zone`/`limit_req`/
 * `limit_req_*` and `limit_conn_zone`/`limit_conn`/`limit_conn_*`
 * (`ngx_http_limit_req_module`, `ngx_http_limit_conn_module`), with nginx's
 * inheritance: each `*_status`/`*_log_level`/`*_dry_run` on its own, the
 * `limit_req` and `limit_conn` lists from the nearest level that has any.
 *
 * Zones are made once, from the http level, and shared by every location
 * that names them, as nginx's shared memory zones are.
 *
 * @module
 */

import { type VariableScope } from "../engine/mod.ts";
import {
  type LimitConnConf,
  LimitConnZone,
  type LimitReqConf,
  LimitReqZone,
  type Parsed,
  parseLimitConn,
  parseLimitConnZone,
  parseLimitReq,
  parseLimitReqZone,
} from "../limits/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { DirectiveValues } from "./directive_values.ts";

/** A level's preaccess settings. */
export interface LimitSettings {
  /** `limit_req`, or `null`. */
  limitReq: LimitReqConf | null;
  /** `limit_conn`, or `null`. */
  limitConn: LimitConnConf | null;
}

/** What the limits compiler reports to and reads. */
export interface LimitsCompileContext {
  /** Variable names, for the zones' keys. */
  scope: VariableScope;
  /** Refuses a directive; `null` for nginx's messages without a place. */
  fail(d: Directive | null, message: string): void;
}

const LOG_LEVELS = ["info", "notice", "warn", "error"] as const;
type LimitLogLevel = typeof LOG_LEVELS[number];

/** Compiles the limits of every level of one configuration. */
export class LimitsCompiler {
  readonly #ctx: LimitsCompileContext;
  readonly #reqZones = new Map<string, LimitReqZone>();
  readonly #connZones = new Map<string, LimitConnZone>();
  /** Each list compiled once: a level's list is read by every level below it. */
  readonly #done = new WeakMap<readonly Directive[], unknown>();
  readonly #values: DirectiveValues;
  readonly #used = new Set<string>();
  readonly #reported = new Set<Directive>();

  /** @param ctx Names and failures. */
  constructor(ctx: LimitsCompileContext) {
    this.#ctx = ctx;
    this.#values = new DirectiveValues(ctx);
  }

  /**
   * Reads the http level's `limit_req_zone` and `limit_conn_zone`.
   *
   * @param block The http block's directives.
   */
  zones(block: readonly Directive[]): void {
    for (const d of block) {
      if (d.name !== "limit_req_zone" && d.name !== "limit_conn_zone") continue;
      const [keyText = "", ...params] = d.args;
      const key = this.#values.get(d, keyText);
      const parsed = d.name === "limit_req_zone"
        ? parseLimitReqZone(key, params)
        : parseLimitConnZone(key, params);
      if (!parsed.ok) {
        this.#ctx.fail(d, parsed.error);
        continue;
      }
      const { name } = parsed.value;
      const req = this.#reqZones.get(name);
      const conn = this.#connZones.get(name);
      if (
        (d.name === "limit_req_zone" && conn !== undefined) ||
        (d.name === "limit_conn_zone" && req !== undefined)
      ) {
        this.#ctx.fail(
          d,
          `the shared memory zone "${name}" is already declared for a different use`,
        );
        continue;
      }
      const bound = req ?? conn;
      if (bound !== undefined) {
        this.#ctx.fail(
          d,
          `${d.name} "${name}" is already bound to key "${bound.spec.key.text}"`,
        );
        continue;
      }
      if (d.name === "limit_req_zone") {
        this.#reqZones.set(
          name,
          new LimitReqZone(parsed.value as LimitReqZone["spec"]),
        );
      } else this.#connZones.set(name, new LimitConnZone(parsed.value));
    }
  }

  /**
   * A level's settings.
   *
   * @param level The level.
   * @returns The settings.
   */
  settings(level: Level): LimitSettings {
    // nginx checks each value as it reads it, used or not.
    for (const name of ["limit_req_status", "limit_conn_status"]) {
      this.#status(level, name);
    }
    for (const name of ["limit_req_log_level", "limit_conn_log_level"]) {
      this.#logLevel(level, name);
    }
    return {
      limitReq: this.#limitReq(level),
      limitConn: this.#limitConn(level),
    };
  }

  /**
   * nginx's check at the end of the configuration: a zone named by
   * `limit_req`/`limit_conn` that no `*_zone` declared.
   */
  finish(): void {
    for (const name of this.#used) {
      if (!this.#reqZones.has(name) && !this.#connZones.has(name)) {
        this.#ctx.fail(null, `zero size shared memory zone "${name}"`);
      }
    }
  }

  #status(level: Level, name: string): number {
    const d = level.last(name);
    if (d === undefined) return 503;
    const n = /^[0-9]+$/.test(d.args[0]!) ? Number(d.args[0]) : NaN;
    if (!(n >= 400 && n <= 599)) {
      this.#once(d, "value must be between 400 and 599");
      return 503;
    }
    return n;
  }

  #logLevel(level: Level, name: string): LimitLogLevel {
    const d = level.last(name);
    if (d === undefined) return "error";
    const text = d.args[0]!.toLowerCase();
    if (!(LOG_LEVELS as readonly string[]).includes(text)) {
      this.#once(d, `invalid value "${d.args[0]}"`);
      return "error";
    }
    return text as LimitLogLevel;
  }

  #dryRun(level: Level, name: string): boolean {
    return level.last(name)?.args[0]?.toLowerCase() === "on";
  }

  /** A message once per directive, though every level below reads it. */
  #once(d: Directive, message: string): void {
    if (this.#reported.has(d)) return;
    this.#reported.add(d);
    this.#ctx.fail(d, message);
  }

  #limitReq(level: Level): LimitReqConf | null {
    const limits = this.#list(
      level,
      "limit_req",
      (d) => parseLimitReq(d.args),
      (rule) => {
        const zone = this.#reqZones.get(rule.zone);
        return zone === undefined ? undefined : { rule, zone };
      },
    );
    if (limits.length === 0) return null;
    return {
      limits,
      logLevel: this.#logLevel(level, "limit_req_log_level"),
      status: this.#status(level, "limit_req_status"),
      dryRun: this.#dryRun(level, "limit_req_dry_run"),
    };
  }

  #limitConn(level: Level): LimitConnConf | null {
    const limits = this.#list(
      level,
      "limit_conn",
      (d) => parseLimitConn(d.args[0]!, d.args[1]!),
      ({ zone: name, conn }) => {
        const zone = this.#connZones.get(name);
        return zone === undefined ? undefined : { conn, zone };
      },
    );
    if (limits.length === 0) return null;
    return {
      limits,
      logLevel: this.#logLevel(level, "limit_conn_log_level"),
      status: this.#status(level, "limit_conn_status"),
      dryRun: this.#dryRun(level, "limit_conn_dry_run"),
    };
  }

  /**
   * A level's `limit_req` or `limit_conn` list, compiled once. A zone named
   * twice is nginx's "is duplicate", declared or not (nginx compares the
   * shared zones `ngx_shared_memory_add` returned); an undeclared zone is
   * left out here and reported by {@linkcode LimitsCompiler.finish}.
   */
  #list<P extends { zone: string }, E>(
    level: Level,
    name: "limit_req" | "limit_conn",
    parse: (d: Directive) => Parsed<P>,
    entry: (parsed: P) => E | undefined,
  ): readonly E[] {
    const list = level.get(name);
    if (list.length === 0) return [];
    const done = this.#done.get(list) as readonly E[] | undefined;
    if (done !== undefined) return done;
    const out: E[] = [];
    const named = new Set<string>();
    for (const d of list) {
      const parsed = parse(d);
      if (!parsed.ok) {
        this.#ctx.fail(d, parsed.error);
        continue;
      }
      const zone = parsed.value.zone;
      this.#used.add(zone);
      if (named.has(zone)) {
        this.#ctx.fail(d, `"${name}" directive is duplicate`);
        continue;
      }
      named.add(zone);
      const e = entry(parsed.value);
      if (e !== undefined) out.push(e);
    }
    this.#done.set(list, out);
    return out;
  }
}
