/**
 * The rewrite module (`ngx_http_rewrite_module.c`): `rewrite`, `return`,
 * `set`, `break` and `if`, compiled per level into a program the rewrite
 * phases run. Running it changes the request's `$uri`/`$args`/variables and
 * says what happens next: go on, search locations again (`last`, or a URI
 * changed without a flag), stay (`break`), or answer (`return`, a redirect).
 *
 * @module
 */

import {
  compileValue,
  type ComplexValue,
  constantValue,
  ValueError,
  type VariableScope,
} from "./complex_value.ts";
import type { LocationConf } from "./model.ts";
import { compileRegex } from "./regex.ts";
import { escapeArgs, unescapeRedirect, uriWasQuoted } from "./uri_escape.ts";
import type { RequestVars } from "./variables.ts";

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

/** What a finished program says. */
export type RewriteOutcome =
  | { kind: "next" } // ran to the end; `uriChanged` tells whether to search again
  | { kind: "last" } // search locations again now
  | { kind: "break" } // stop rewriting, stay in the location
  | { kind: "return"; code: number; text: string | null };

/** What a program reads and changes besides the request's variables. */
export interface RewriteRun {
  /** The request. */
  vars: RequestVars;
  /** Set when `$uri` changed (a rewrite without `break`). */
  uriChanged: boolean;
  /** Set when a `rewrite` changed the URI in this location. */
  rewritten: boolean;
  /** The level whose settings apply: an `if` that matched switches it. */
  location: LocationConf | null;
  /** Tests a path for `-f`/`-d`/`-e`/`-x`. */
  fileKind(path: string): "file" | "dir" | null;
}

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

/**
 * Why a status nginx sends (any up to 999) is refused: `Deno.serve` sends
 * a response's status from 200 to 599 only (`Response` throws a
 * `RangeError` for any other).
 */
export const SENDABLE_STATUSES =
  "the gateway's runtime sends a status from 200 to 599 only";

/**
 * Whether the runtime can send a status as the final answer's.
 *
 * @param code The status.
 * @returns `true` from 200 to 599.
 *
 * @example Usage
 * ```ts
 * import { sendable } from "./rewrite.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(sendable(599), true);
 * strictEqual(sendable(999), false);
 * ```
 */
export function sendable(code: number): boolean {
  return code >= 200 && code <= 599;
}

/** Codes `return` takes with text or a URL (`ngx_http_rewrite_return`). */
export function isRedirectCode(code: number): boolean {
  return REDIRECT_CODES.has(code);
}

/**
 * Compiles `return code [text|URL]` or `return URL`.
 *
 * @param args The arguments.
 * @param scope Variable names.
 * @returns The op.
 * @throws {ValueError} With nginx's message.
 */
export function compileReturn(args: string[], scope: VariableScope): RewriteOp {
  const first = args[0]!;
  if (args.length === 1 && !/^\d+$/.test(first)) {
    // `return URL`: only an absolute URL (ngx_http_rewrite_return).
    if (
      !first.startsWith("http://") && !first.startsWith("https://") &&
      !first.startsWith("$scheme")
    ) {
      throw new ValueError(`invalid return code "${first}"`);
    }
    return { op: "return", code: 302, value: compileValue(first, scope) };
  }
  if (!/^\d+$/.test(first) || Number(first) > 999) {
    throw new ValueError(`invalid return code "${first}"`);
  }
  const code = Number(first);
  if (!sendable(code)) {
    throw new ValueError(
      `"return ${first}" is not supported: ${SENDABLE_STATUSES}`,
    );
  }
  const value = args[1] === undefined ? null : compileValue(args[1], scope);
  return { op: "return", code, value };
}

/**
 * Compiles `rewrite regex replacement [flag]`.
 *
 * @param args The arguments.
 * @param scope Variable names.
 * @returns The op.
 * @throws {ValueError} With nginx's message.
 */
export function compileRewrite(
  args: string[],
  scope: VariableScope,
): RewriteOp {
  const [source = "", replacement = "", flag] = args;
  const regex = compileRegex(source, false);
  if (
    flag !== undefined && flag !== "last" && flag !== "break" &&
    flag !== "redirect" && flag !== "permanent"
  ) {
    throw new ValueError(`invalid parameter "${flag}"`);
  }
  const external = replacement.startsWith("http://") ||
    replacement.startsWith("https://") || replacement.startsWith("$scheme");
  // Where the arguments start and whether the request's are kept are read
  // from the text as written (ngx_http_rewrite, ngx_http_script_compile):
  // a `?` a capture brings (a client's `%3F`) stays in the path.
  const addArgs = !replacement.endsWith("?");
  const text = addArgs ? replacement : replacement.slice(0, -1);
  const q = text.indexOf("?");
  return {
    op: "rewrite",
    regex,
    path: compileValue(q < 0 ? text : text.slice(0, q), scope),
    args: q < 0 ? null : compileValue(text.slice(q + 1), scope),
    addArgs,
    flag: flag ?? null,
    external,
  };
}

/**
 * Compiles an `if` condition from its arguments as the parser gives them
 * (`($request_method`, `=`, `OPTIONS)`), after
 * `ngx_http_rewrite_if_condition`.
 *
 * @param args The arguments.
 * @param scope Variable names.
 * @returns The condition.
 * @throws {ValueError} With nginx's message.
 */
export function compileCondition(
  args: string[],
  scope: VariableScope,
): Condition {
  const words = [...args];
  const whole = words.join(" ");
  if (!words[0]?.startsWith("(") || !words.at(-1)?.endsWith(")")) {
    throw new ValueError(`invalid condition "${whole}"`);
  }
  words[0] = words[0].slice(1);
  words[words.length - 1] = words.at(-1)!.slice(0, -1);
  const parts = words.filter((w, i) =>
    w !== "" || (i > 0 && i < words.length - 1)
  );
  if (parts.length === 0) throw new ValueError(`invalid condition "${whole}"`);
  const [a = "", op, b] = parts;
  if (parts.length === 1) {
    if (!a.startsWith("$")) {
      throw new ValueError(`invalid condition "${a}"`);
    }
    return { kind: "value", value: compileValue(a, scope) };
  }
  if (parts.length === 2) {
    const m = /^(!?)-([fdex])$/.exec(a);
    if (m === null) throw new ValueError(`invalid condition "${a}"`);
    return {
      kind: "file",
      value: compileValue(op!, scope),
      negate: m[1] === "!",
      test: m[2] as "f" | "d" | "e" | "x",
    };
  }
  if (parts.length !== 3 || !a.startsWith("$")) {
    throw new ValueError(`unexpected "${parts[3] ?? a}" in condition`);
  }
  const value = compileValue(a, scope);
  switch (op) {
    case "=":
    case "!=":
      return {
        kind: "compare",
        value,
        negate: op === "!=",
        to: compileValue(b!, scope),
      };
    case "~":
    case "~*":
    case "!~":
    case "!~*":
      return {
        kind: "regex",
        value,
        negate: op.startsWith("!"),
        regex: compileRegex(b!, op.endsWith("*")),
      };
  }
  throw new ValueError(`unexpected "${op}" in condition`);
}

function test(condition: Condition, run: RewriteRun): boolean {
  const value = condition.value.evaluate(run.vars);
  switch (condition.kind) {
    case "value":
      return value !== "" && value !== "0";
    case "compare":
      return (value === condition.to.evaluate(run.vars)) !== condition.negate;
    case "regex": {
      const m = condition.regex.exec(value);
      if (m !== null) setCaptures(run.vars, m);
      return (m !== null) !== condition.negate;
    }
    case "file": {
      const kind = run.fileKind(value);
      const yes = condition.test === "f"
        ? kind === "file"
        : condition.test === "d"
        ? kind === "dir"
        : kind !== null;
      return yes !== condition.negate;
    }
  }
}

/**
 * A regex's match as the request's captures: `$1`…`$9`, and each named
 * capture as a variable (ngx_http_regex_exec sets both).
 *
 * @param vars The request.
 * @param m The match.
 */
export function setCaptures(vars: RequestVars, m: RegExpExecArray): void {
  vars.captures = [...m].map((c) => c ?? "");
  if (m.groups) {
    const set = vars.vars ??= new Map();
    for (const [k, v] of Object.entries(m.groups)) set.set(k, v ?? "");
  }
}

/**
 * Runs a program (`ngx_http_rewrite_handler`).
 *
 * @param program The level's program.
 * @param run The request and what the program may change.
 * @returns What happens next.
 */
export function runRewrite(
  program: RewriteProgram,
  run: RewriteRun,
): RewriteOutcome {
  const { vars } = run;
  for (const op of program.ops) {
    switch (op.op) {
      case "return": {
        const text = op.value === null ? null : op.value.evaluate(vars);
        return { kind: "return", code: op.code, text };
      }
      case "set":
        (vars.vars ??= new Map()).set(op.name, op.value.evaluate(vars));
        break;
      case "break":
        // ngx_http_script_break_code: a URI changed before stays, but no
        // new location search.
        run.uriChanged = false;
        return { kind: "break" };
      case "if": {
        if (!test(op.condition, run)) break;
        run.location = op.location;
        if (op.location.rewrite === null) break;
        const inner = runRewrite(op.location.rewrite, run);
        if (inner.kind !== "next") return inner;
        break;
      }
      case "rewrite": {
        const m = op.regex.exec(vars.uri);
        if (m === null) break;
        setCaptures(vars, m);
        const outcome = applyRewrite(op, run);
        if (outcome !== null) return outcome;
        break;
      }
    }
  }
  return { kind: "next" };
}

/** A matched `rewrite`: the new `$uri` and `$args`, or a redirect. */
function applyRewrite(
  op: Extract<RewriteOp, { op: "rewrite" }>,
  run: RewriteRun,
): RewriteOutcome | null {
  const { vars } = run;
  const redirect = op.external || op.flag === "redirect" ||
    op.flag === "permanent";
  // ngx_http_script_copy_capture_code: in a redirect or in the arguments, a
  // capture of a URI the client escaped is escaped again, so its `&`, `?`,
  // `#` or line break stays data, not a new argument or a header.
  const quoted = uriWasQuoted(vars.requestUri);
  const path = evaluate(op.path, vars, redirect && quoted);
  const args = op.args === null ? null : evaluate(op.args, vars, quoted);
  if (redirect) {
    // ngx_http_script_regex_end_code: unescaped for a redirect, then the
    // request's arguments, as they came.
    let location = unescapeRedirect(args === null ? path : `${path}?${args}`);
    if (op.addArgs && vars.args !== "") {
      location += `${op.args === null ? "?" : "&"}${vars.args}`;
    }
    return {
      kind: "return",
      code: op.flag === "permanent" ? 301 : 302,
      text: location,
    };
  }
  vars.uri = path;
  if (args !== null) {
    vars.args = op.addArgs && vars.args !== "" ? `${args}&${vars.args}` : args;
  } else if (!op.addArgs) {
    vars.args = "";
  }
  // The location's `proxy_pass` URI no longer applies: the rewritten URI
  // goes as it is (r->valid_location = 0).
  run.rewritten = true;
  if (op.flag === "break") {
    run.uriChanged = false;
    return { kind: "break" };
  }
  run.uriChanged = true;
  if (op.flag === "last") return { kind: "last" };
  return null;
}

/** A value with its `$1`…`$9` escaped as arguments when `escape` is set. */
function evaluate(
  value: ComplexValue,
  vars: RequestVars,
  escape: boolean,
): string {
  if (!escape || !value.usesCaptures) return value.evaluate(vars);
  const saved = vars.captures;
  vars.captures = saved.map(escapeArgs);
  try {
    return value.evaluate(vars);
  } finally {
    vars.captures = saved;
  }
}

/** A program of no directives, for levels without any. */
export const EMPTY_PROGRAM: RewriteProgram = { ops: [] };

/** `constantValue` for callers building programs by hand. */
export { constantValue };
