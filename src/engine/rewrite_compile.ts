/**
 * The rewrite module's directives compiled into operations
 * (`ngx_http_rewrite_return`, `ngx_http_rewrite`, `ngx_http_rewrite_if`):
 * `return`, `rewrite` and the conditions of `if`, refused with nginx's
 * words where nginx refuses them.
 *
 * @module
 */

import {
  compileValue,
  ValueError,
  type VariableScope,
} from "./complex_value.ts";
import { compileRegex } from "./regex.ts";
import type { Condition, RewriteOp } from "./rewrite_program.ts";
import { sendable, SENDABLE_STATUSES } from "./sendable_status.ts";

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

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
  // ngx_http_rewrite refuses it before the regex is compiled.
  if (replacement === "") throw new ValueError("empty replacement");
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
