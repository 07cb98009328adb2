/**
 * SSI parameter values and `if` expressions as nginx evaluates them
 * (`ngx_http_ssi_evaluate_string`, `ngx_http_ssi_if`): `$name` and
 * `${name}` are replaced by the variable's value (nothing when it has
 * none), `\\`, `\'`, `\"` and `\$` stand for the character, and any other
 * backslash is kept. Values are byte strings (one char per byte).
 *
 * @module
 */

import { ssiRegex } from "./ssi_regex.ts";

/** A variable's value by its lower-case name; `undefined` when it has none. */
export type SsiLookup = (name: string) => string | undefined;

/** An evaluation's result: the value, or nginx's error line. */
export type Evaluated = { ok: true; value: string } | {
  ok: false;
  message: string;
};

function isNameChar(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) || c === 0x5f;
}

/** Text up to an unescaped `$` (or the end), escapes resolved. */
function literal(text: string, from: number, stopAtDollar: boolean) {
  let out = "";
  let quoted = false;
  let i = from;
  for (; i < text.length; i++) {
    const ch = text[i]!;
    if (!quoted) {
      if (ch === "\\") {
        quoted = true;
        continue;
      }
      if (ch === "$" && stopAtDollar) break;
    } else {
      quoted = false;
      if (ch !== "\\" && ch !== "'" && ch !== '"' && ch !== "$") out += "\\";
    }
    out += ch;
  }
  return { out, next: i };
}

/**
 * Evaluates a parameter's value.
 *
 * @param text The value as parsed (backslashes kept).
 * @param lookup The variables.
 * @param max The longest value: past it, an error (nginx has no bound).
 * @returns The value, or the error nginx logs.
 *
 * @example Usage
 * ```ts
 * import { evaluateString } from "./evaluate.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const lookup = (name: string) => name === "a" ? "A" : undefined;
 * deepStrictEqual(evaluateString("x$a${a}y$b\\$a", lookup), { ok: true, value: "xAAy$a" });
 * deepStrictEqual(evaluateString("${a", lookup), {
 *   ok: false,
 *   message: 'the closing bracket in "a" variable is missing',
 * });
 * ```
 */
export function evaluateString(
  text: string,
  lookup: SsiLookup,
  max = Infinity,
): Evaluated {
  if (!text.includes("$")) {
    return { ok: true, value: literal(text, 0, false).out };
  }
  let value = "";
  let i = 0;
  while (i < text.length) {
    if (text[i] !== "$") {
      const part = literal(text, i, true);
      value += part.out;
      i = part.next;
      continue;
    }
    if (++i === text.length) return invalidName(text);
    let bracket = false;
    if (text[i] === "{") {
      bracket = true;
      if (++i === text.length) return invalidName(text);
    }
    const start = i;
    let end = i;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x7d && bracket) {
        end = i;
        i++;
        bracket = false;
        break;
      }
      if (!isNameChar(c)) break;
      end = i + 1;
    }
    if (bracket) {
      return {
        ok: false,
        message: `the closing bracket in "${
          text.slice(start, i)
        }" variable is missing`,
      };
    }
    if (end === start) return invalidName(text);
    const found = lookup(text.slice(start, end).toLowerCase());
    if (found !== undefined) value += found;
    if (value.length > max) {
      return {
        ok: false,
        message: `the value of "${text}" exceeds ${max} bytes`,
      };
    }
  }
  return { ok: true, value };
}

function invalidName(text: string): Evaluated {
  return { ok: false, message: `invalid variable name in "${text}"` };
}

/** An `if` expression's verdict, with the regex captures it set. */
export type Verdict =
  | { ok: true; value: boolean; captures?: RegexCaptures }
  | { ok: false; message: string };

/** What a matching `/regex/` leaves: `$0`…`$9` and named captures. */
export interface RegexCaptures {
  /** `$0` (the match) and each group; `""` for one that took no part. */
  groups: string[];
  /** Named groups. */
  named: Record<string, string>;
}

/**
 * Evaluates an `if`/`elif` expression: `$a`, `$a = text`, `$a != text`,
 * `$a = /regex/`. The left side is the leading run of
 * `[A-Za-z0-9_${}"']` (upper case folded, as nginx folds it in place);
 * the right side is the rest of the expression, spaces and quotes included.
 *
 * @param expr The `expr` parameter as parsed.
 * @param lookup The variables.
 * @param max The longest value of a side.
 * @returns Whether the branch is taken, or nginx's error.
 *
 * @example Usage
 * ```ts
 * import { evaluateIf } from "./evaluate.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const lookup = (name: string) => name === "uri" ? "/a/b" : undefined;
 * deepStrictEqual(evaluateIf("$uri", lookup), { ok: true, value: true });
 * deepStrictEqual(evaluateIf("$URI != \\/a/b", lookup), { ok: true, value: false });
 * deepStrictEqual(evaluateIf("$uri = /^\\/a\\/(.)\\$/", lookup), {
 *   ok: true,
 *   value: true,
 *   captures: { groups: ["/a/b", "b"], named: {} },
 * });
 * ```
 */
export function evaluateIf(
  expr: string,
  lookup: SsiLookup,
  max = Infinity,
): Verdict {
  let p = 0;
  let folded = "";
  for (; p < expr.length; p++) {
    const c = expr.charCodeAt(p);
    if (c >= 0x41 && c <= 0x5a) {
      folded += String.fromCharCode(c | 0x20);
      continue;
    }
    if (
      (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x24 ||
      c === 0x7b || c === 0x7d || c === 0x5f || c === 0x22 || c === 0x27
    ) {
      folded += expr[p];
      continue;
    }
    break;
  }
  // The message shows the expression as nginx has it then: folded in place.
  const shown = folded + expr.slice(p);
  while (expr[p] === " ") p++;
  const left = evaluateString(folded, lookup, max);
  if (!left.ok) return left;
  if (p === expr.length) return { ok: true, value: left.value.length > 0 };
  let negative = false;
  if (expr[p] === "=") p++;
  else if (expr[p] === "!" && expr[p + 1] === "=") {
    negative = true;
    p += 2;
  } else return invalidExpression(shown);
  while (expr[p] === " ") p++;
  let last = expr.length;
  if (p < last - 1 && expr[p] === "/") {
    if (expr[last - 1] !== "/") return invalidExpression(shown);
    last--;
    p++;
    const pattern = evaluateString(expr.slice(p, last), lookup, max);
    if (!pattern.ok) return pattern;
    const matched = regexMatch(pattern.value, left.value);
    if (!matched.ok) return matched;
    const taken = matched.captures !== null;
    return matched.captures === null
      ? { ok: true, value: negative }
      : { ok: true, value: taken !== negative, captures: matched.captures };
  }
  if (p < last - 1 && expr[p] === "\\" && expr[p + 1] === "/") p++;
  const right = evaluateString(expr.slice(p, last), lookup, max);
  if (!right.ok) return right;
  return { ok: true, value: (left.value === right.value) !== negative };
}

function invalidExpression(expr: string): Verdict {
  return { ok: false, message: `invalid expression in "${expr}"` };
}

/** `ngx_http_ssi_regex_match`: the captures of a match, `null` for none. */
function regexMatch(
  pattern: string,
  subject: string,
): { ok: true; captures: RegexCaptures | null } | {
  ok: false;
  message: string;
} {
  const regex = ssiRegex(pattern);
  if (typeof regex === "string") return { ok: false, message: regex };
  const match = regex.exec(subject);
  if (match === null) return { ok: true, captures: null };
  // PCRE counts up to the last group that took part.
  let count = match.length;
  while (count > 1 && match[count - 1] === undefined) count--;
  const groups: string[] = [];
  for (let i = 0; i < count; i++) groups.push(match[i] ?? "");
  const named: Record<string, string> = {};
  for (const [name, value] of Object.entries(match.groups ?? {})) {
    named[name.toLowerCase()] = value ?? "";
  }
  return { ok: true, captures: { groups, named } };
}
