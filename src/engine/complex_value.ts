/**
 * Values with variables, compiled once (nginx's `ngx_http_complex_value_t`,
 * `ngx_http_script_compile`): `"$host:$server_port"` becomes a list of
 * literal parts and variable readers, so a request only concatenates. A
 * variable's name is resolved when the configuration is compiled, and an
 * unknown one is nginx's `unknown "x" variable` there, never per request.
 *
 * @module
 */

import type { RequestVars } from "./variables.ts";

/**
 * Reads one variable of a request; `undefined` when nginx finds no value
 * (`v->not_found`): a value reads it as empty, a log line prints `-`.
 */
export type VariableReader = (r: RequestVars) => string | undefined;

/** Resolves variable names at compile time. */
export interface VariableScope {
  /**
   * The reader for `$name`, or `null` when nginx would not know it.
   *
   * @param name Without `$`.
   */
  reader(name: string): VariableReader | null;
  /**
   * The value of `$name` when it is the same for every request (a `geo`
   * with only a `default`, never `set`), else `null`: a value compiled
   * with `fold` takes it as text.
   *
   * @param name Without `$`, lower case.
   */
  constant?(name: string): string | null;
}

/** A compiled value. */
export interface ComplexValue {
  /** The value as written. */
  readonly text: string;
  /** The value when it has no variables, else `null`. */
  readonly constant: string | null;
  /** Whether it reads `$1`…`$9`. */
  readonly usesCaptures: boolean;
  /**
   * With variables, the part the configuration fixes (a `root`'s or an
   * `alias`'s folder, `uri_map.ts` `containmentRoot()`): the text before
   * its first variable, or when it begins with one, that variable and the
   * text after it. Absent when the value is constant; its `text` is the
   * whole value's.
   */
  readonly folder?: ComplexValue;
  /** The value for a request. */
  evaluate(r: RequestVars): string;
}

/** The value could not be compiled: nginx's message, without its place. */
export class ValueError extends Error {
  /** @param message nginx's message. */
  constructor(message: string) {
    super(message);
    this.name = "ValueError";
  }
}

const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * A value without variables.
 *
 * @param text The value.
 * @returns The compiled value.
 *
 * @example Usage
 * ```ts
 * import { constantValue } from "./complex_value.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(constantValue("close").constant, "close");
 * ```
 */
export function constantValue(text: string): ComplexValue {
  return {
    text,
    constant: text,
    usesCaptures: false,
    evaluate: () => text,
  };
}

/**
 * Compiles a value as `ngx_http_script_compile` reads it: `$name`,
 * `${name}` and `$1`…`$9`; any other `$` is an error.
 *
 * @param text The value as written (quotes already removed).
 * @param scope Resolves names.
 * @param fold Take a variable whose value is the same for every request
 * ({@linkcode VariableScope.constant}) as text: a path written with
 * nginx's literal-`$` idiom (`\\server\c${dollar}\app`) is then a
 * constant, checked and opened as one at start. Only where nginx's
 * behaviour does not change with whether a value has variables.
 * @returns The compiled value.
 * @throws {ValueError} With nginx's message for a bad or unknown name.
 *
 * @example Usage
 * ```ts
 * import { compileValue } from "./complex_value.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const scope = { reader: (n: string) => n === "x" ? () => "1" : null };
 * const v = compileValue("a$x-${x}b", scope);
 * strictEqual(v.evaluate({} as never), "a1-1b");
 * ```
 */
export function compileValue(
  text: string,
  scope: VariableScope,
  fold = false,
): ComplexValue {
  if (!text.includes("$")) return constantValue(text);
  const parts: (string | VariableReader)[] = [];
  let usesCaptures = false;
  const literal = (s: string) => {
    const last = parts.length - 1;
    if (typeof parts[last] === "string") parts[last] += s;
    else parts.push(s);
  };
  for (const part of valueParts(text)) {
    const fixed = fold && typeof part !== "string" && part.name !== undefined
      ? scope.constant?.(part.name.toLowerCase()) ?? null
      : null;
    if (typeof part === "string") {
      literal(part);
    } else if (fixed !== null) {
      literal(fixed);
    } else if (part.capture !== undefined) {
      const n = part.capture;
      parts.push((r) => r.captures[n] ?? "");
      usesCaptures = true;
    } else {
      const reader = scope.reader(part.name.toLowerCase());
      if (reader === null) {
        throw new ValueError(`unknown "${part.name}" variable`);
      }
      parts.push(reader);
    }
  }
  return {
    ...joined(text, parts, usesCaptures),
    folder: folderOf(text, parts, usesCaptures),
  };
}

/**
 * The part of a value a configuration fixes (`ComplexValue.folder`): its
 * text before its first variable, whatever variable that is (a capture
 * numbered or named, a `set` variable): what comes after may be a client's.
 * A value that begins with a variable has nothing fixed before it, so its
 * first variable and the text after it count (`root $base/$host`: the
 * folder `$base/`), as the configuration's own.
 */
function folderOf(
  text: string,
  parts: readonly (string | VariableReader)[],
  usesCaptures: boolean,
): ComplexValue {
  const first = parts[0]!;
  if (typeof first === "string") return constantValue(first);
  const second = parts[1];
  const lead = typeof second === "string" ? [first, second] : [first];
  return joined(text, lead, usesCaptures);
}

/** A value of literal parts and variable readers, joined per request. */
function joined(
  text: string,
  parts: readonly (string | VariableReader)[],
  usesCaptures: boolean,
): ComplexValue {
  const only = parts.length === 1 ? parts[0]! : null;
  if (typeof only === "string") {
    // Every variable folded: the value as text, its written form kept.
    return { text, constant: only, usesCaptures, evaluate: () => only };
  }
  if (typeof only === "function") {
    // One variable alone (`$host`, `$station_upgrade`): its reader's value,
    // without a loop or a string built per request.
    return {
      text,
      constant: null,
      usesCaptures,
      evaluate: (r) => only(r) ?? "",
    };
  }
  return {
    text,
    constant: null,
    usesCaptures,
    evaluate: (r) => {
      let out = "";
      for (let k = 0; k < parts.length; k++) {
        const p = parts[k]!;
        out += typeof p === "string" ? p : p(r) ?? "";
      }
      return out;
    },
  };
}

/**
 * The variable names a value reads (`$name`, `${name}`; not `$1`…`$9`), in
 * lower case, as {@linkcode compileValue} resolves them.
 *
 * @param text The value as written.
 * @returns The names, in order.
 *
 * @example Usage
 * ```ts
 * import { variableNames } from "./complex_value.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(variableNames("a$Host-${x}$1"), ["host", "x"]);
 * ```
 */
export function variableNames(text: string): string[] {
  const names: string[] = [];
  for (const part of valueParts(text)) {
    if (typeof part !== "string" && part.capture === undefined) {
      names.push(part.name.toLowerCase());
    }
  }
  return names;
}

/** A part of a value: a literal, a capture `$1`…`$9`, or a variable. */
type ValuePart = string | { capture: number; name?: undefined } | {
  capture?: undefined;
  name: string;
};

/**
 * Splits a value as `ngx_http_script_compile` reads it: `$name`, `${name}`
 * and `$1`…`$9`; any other `$` is an error. The one scanner of `$` in a
 * value, for compiling it and for listing what it reads.
 */
function valueParts(text: string): ValuePart[] {
  const parts: ValuePart[] = [];
  let literal = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c !== "$") {
      literal += c;
      i++;
      continue;
    }
    i++;
    if (literal !== "") parts.push(literal);
    literal = "";
    if (i < text.length && text[i]! >= "1" && text[i]! <= "9") {
      parts.push({ capture: Number(text[i]) });
      i++;
      continue;
    }
    let name = "";
    if (text[i] === "{") {
      const end = text.indexOf("}", i);
      if (end < 0) {
        throw new ValueError(
          `the closing bracket in "${text}" variable is missing`,
        );
      }
      name = text.slice(i + 1, end);
      i = end + 1;
    } else {
      while (i < text.length && NAME_CHAR.test(text[i]!)) name += text[i++];
    }
    if (name === "" || !/^[A-Za-z0-9_]+$/.test(name)) {
      throw new ValueError(`invalid variable name in "${text}"`);
    }
    parts.push({ name });
  }
  if (literal !== "") parts.push(literal);
  return parts;
}
