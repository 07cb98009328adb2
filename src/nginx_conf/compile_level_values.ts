/**
 * What computing a level's settings needs (`SettingsContext`), and the
 * readers every settings file shares: a directive of the nearest level
 * that sets it, read as a flag, a value with variables, a time, a size or
 * a set of names, with nginx's defaults where no level sets it and the
 * refusal collected with its place.
 *
 * @module
 */

import {
  compileValue,
  type ComplexValue,
  constantValue,
  type LocationConf,
  type ProxyPass,
  ValueError,
  type VariableScope,
} from "../engine/mod.ts";
import { sizeText } from "../config/mod.ts";
import type { AccessSettings } from "./compile_access.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { nginxTimeMs, sizeSetting } from "./values.ts";

/** What computing settings needs besides the level. */
export interface SettingsContext {
  /** Variable names. */
  scope: VariableScope;
  /** The nginx prefix relative paths start at. */
  prefix: string;
  /** Refuses a directive: the message is collected with its place. */
  fail(d: Directive, message: string): void;
  /** Warns about a directive. */
  warn(d: Directive, message: string): void;
  /**
   * The extension map of a level's `types {}` blocks, in file order: each
   * adds to the one table the level has (`ngx_http_core_types`).
   */
  types(blocks: readonly Directive[]): ReadonlyMap<string, string>;
  /** The model of a `proxy_pass` (its group registered). */
  proxyPass(d: Directive): ProxyPass | null;
  /** The group a `fastcgi_pass` names (registered), or `null` when refused. */
  fastcgiPass(d: Directive): string | null;
  /** The access and preaccess settings of a level. */
  access(level: Level): AccessSettings;
  /** The access logs of a level. */
  accessLogs(level: Level): LocationConf["accessLogs"];
  /** The error logs of a level. */
  errorLogs(level: Level): LocationConf["errorLogs"];
}

/** The parts of a location's identity that settings depend on. */
export interface LocationIdentity {
  match: LocationConf["match"];
  name: string;
  regex: RegExp | null;
  place: LocationConf["place"];
}

const MINUTE = 60_000;

/** An `on`/`off` directive's value at a level, `fallback` when no level sets it. */
export function flag(level: Level, name: string, fallback: boolean): boolean {
  const d = level.last(name);
  return d === undefined ? fallback : d.args[0]!.toLowerCase() === "on";
}

/**
 * A directive's argument compiled as a value; a refusal is collected.
 * `fold` takes a variable that is the same for every request as text
 * (`compileValue`'s).
 */
export function value(
  ctx: Pick<SettingsContext, "scope" | "fail">,
  d: Directive,
  text: string,
  fold = false,
): ComplexValue {
  try {
    return compileValue(text, ctx.scope, fold);
  } catch (error) {
    if (!(error instanceof ValueError)) throw error;
    ctx.fail(d, error.message);
    return constantValue(text);
  }
}

/** A time directive in milliseconds (nginx's default of 60 s when unset). */
export function time(
  ctx: Pick<SettingsContext, "fail">,
  level: Level,
  name: string,
): number {
  const d = level.last(name);
  if (d === undefined) return MINUTE;
  const ms = nginxTimeMs(d.args[0]!);
  if (ms === null || ms > 2 ** 31 - 1) {
    ctx.fail(d, `"${name}" directive invalid value`);
    return MINUTE;
  }
  return ms;
}

/** A size directive in bytes, `fallback` when unset; past `max` refused. */
export function size(
  ctx: Pick<SettingsContext, "fail">,
  level: Level,
  name: string,
  { fallback, max }: { fallback: number; max?: number },
): number {
  const d = level.last(name);
  if (d === undefined) return fallback;
  const parsed = sizeSetting(name, d.args[0]!);
  if (!parsed.ok) {
    ctx.fail(d, parsed.error);
    return fallback;
  }
  const text = parsed.value;
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    text.slice(-1) as "k" | "m" | "g"
  ] ?? 1;
  const bytes = Number(text.replace(/\D$/, "")) * unit;
  if (max !== undefined && bytes > max) {
    ctx.fail(
      d,
      `"${name} ${
        d.args[0]
      }" is not supported: the gateway takes a size up to ${
        sizeText(max)
      } (a buffer a peer fills, memory bounded per request)`,
    );
    return fallback;
  }
  return bytes;
}

/** An array directive's first arguments in lower case (the nearest level's list). */
export function lowerSet(level: Level, name: string): Set<string> {
  return new Set(level.get(name).map((d) => d.args[0]!.toLowerCase()));
}
