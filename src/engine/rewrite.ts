/**
 * The rewrite module (`ngx_http_rewrite_module.c`): `rewrite`, `return`,
 * `set`, `break` and `if`, compiled per level into a program the rewrite
 * phases run. Running it changes the request's `$uri`/`$args`/variables and
 * says what happens next: go on, search locations again (`last`, or a URI
 * changed without a flag), stay (`break`), or answer (`return`, a redirect).
 *
 * Here the program runs; its form is in `rewrite_program.ts`, its compiler
 * in `rewrite_compile.ts`.
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";
import type { LocationConf } from "./model.ts";
import type {
  Condition,
  RewriteOp,
  RewriteProgram,
} from "./rewrite_program.ts";
import { escapeArgs, unescapeRedirect, uriWasQuoted } from "./uri_escape.ts";
import type { RequestVars } from "./variables.ts";

/** What a finished program says. */
export type RewriteOutcome =
  | { kind: "next" } // ran to the end; `uriChanged` tells whether to search again
  | { kind: "last" } // search locations again now
  | { kind: "break" } // stop rewriting, stay in the location
  | { kind: "return"; code: number; text: string | null }
  // nginx answers 500 itself, with this line at `error`
  | { kind: "error"; message: string };

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
  if (m.groups) setNamed(vars, m.groups);
}

/**
 * A regex match's named captures as the request's variables
 * (ngx_http_regex_exec); an unmatched one is empty.
 *
 * @param vars The request.
 * @param groups The match's groups.
 */
export function setNamed(
  vars: RequestVars,
  groups: Record<string, string | undefined>,
): void {
  const set = vars.vars ??= new Map();
  // Variable names are case-insensitive; readers ask in lower case.
  for (const k in groups) set.set(k.toLowerCase(), groups[k] ?? "");
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
  if (path === "") {
    // ngx_http_script_regex_end_code: no URI to search locations with.
    return { kind: "error", message: "the rewritten URI has a zero length" };
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
