/**
 * `log_format` (`ngx_http_log_compile_format`): a format compiled once into
 * literal text and value readers, written per request from a
 * {@linkcode LogRecord} the handler fills. Variables are escaped by the
 * format's `escape=` mode; nginx's own log values (`$status`,
 * `$time_local`, `$body_bytes_sent`, …) never are. A variable that is not
 * found prints `-` with `escape=default` and nothing with `json`/`none`; a
 * found empty value prints nothing (an empty `Referer:` is `""`).
 *
 * @module
 */

import {
  escapeLogJson,
  escapeLogValue,
  unescapedLogValue,
} from "./log_values.ts";
import type { LogRecord } from "./log_record.ts";
import {
  type LogVariable,
  type LogVariableScope,
  recordName,
} from "./log_variables.ts";

export type { LogVariable, LogVariableScope } from "./log_variables.ts";

/** A format's escaping (`escape=`). */
export type LogEscape = "default" | "json" | "none";

type Op = string | ((record: LogRecord) => string);

/** A compiled `log_format`. */
export interface LogFormat {
  /** The name. */
  readonly name: string;
  /** The escaping mode. */
  readonly escape: LogEscape;
  /** The format text, its arguments joined as nginx joins them (no separator). */
  readonly text: string;
  /**
   * Some variable reads the request's fields when the line is written
   * (beyond `combined`'s two, read when the request starts).
   */
  readonly readsFields: boolean;
  /**
   * The format names `$request_length`: each request's head is kept for
   * its count, and its body read so that one cut short tells its bytes.
   */
  readonly readsLength: boolean;
  /**
   * The format names `$content_length`: a chunked body the request did not
   * read is discarded before the line, as nginx's is, for its value.
   */
  readonly readsBodyLength: boolean;
  /** @internal The parts. */
  readonly ops: readonly Op[];
}

/** What compiling a `log_format` gave: the format, or nginx's `[emerg]` message. */
export type LogFormatResult =
  | { ok: true; format: LogFormat }
  | { ok: false; error: string };

function variableOp(v: LogVariable, escape: LogEscape): Op {
  const { read, encoding } = v;
  switch (escape) {
    case "default":
      return (r) => {
        const value = read(r);
        return value === undefined ? "-" : escapeLogValue(value, encoding);
      };
    case "json":
      return (r) => {
        const value = read(r);
        return value === undefined ? "" : escapeLogJson(value, encoding);
      };
    case "none":
      return (r) => {
        const value = read(r);
        return value === undefined ? "" : unescapedLogValue(value, encoding);
      };
  }
}

const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Compiles a `log_format` from its arguments after the name, as
 * `ngx_http_log_compile_format`: an optional `escape=` first, then the
 * format strings, joined with nothing between them.
 *
 * @param name The format's name.
 * @param args The arguments after the name (quotes removed).
 * @param scope Resolves variables this module does not know.
 * @returns The format, or nginx's message.
 *
 * @example Usage
 * ```ts
 * import { compileLogFormat } from "./log_format.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const r = compileLogFormat("short", ["$remote_addr ", "$status"]);
 * strictEqual(r.ok && r.format.text, "$remote_addr $status");
 * ```
 */
export function compileLogFormat(
  name: string,
  args: readonly string[],
  scope: LogVariableScope | null = null,
): LogFormatResult {
  let escape: LogEscape = "default";
  let first = 0;
  if (args[0]?.startsWith("escape=")) {
    const mode = args[0].slice(7);
    if (mode !== "default" && mode !== "json" && mode !== "none") {
      return { ok: false, error: `unknown log format escaping "${mode}"` };
    }
    escape = mode;
    first = 1;
  }
  const ops: Op[] = [];
  let readsFields = false;
  let readsLength = false;
  let readsBodyLength = false;
  for (const arg of args.slice(first)) {
    let i = 0;
    while (i < arg.length) {
      const start = i;
      if (arg[i] !== "$") {
        while (i < arg.length && arg[i] !== "$") i++;
        const literal = arg.slice(start, i);
        const last = ops.length - 1;
        if (typeof ops[last] === "string") ops[last] += literal;
        else ops.push(literal);
        continue;
      }
      const invalid = {
        ok: false,
        error: `invalid parameter "${arg.slice(start)}"`,
      } as const;
      if (++i === arg.length) return invalid;
      let bracket = false;
      if (arg[i] === "{") {
        bracket = true;
        if (++i === arg.length) return invalid;
      }
      const nameStart = i;
      while (i < arg.length && NAME_CHAR.test(arg[i]!)) i++;
      const varName = arg.slice(nameStart, i);
      if (bracket) {
        if (arg[i] !== "}") {
          return {
            ok: false,
            error: `the closing bracket in "${varName}" variable is missing`,
          };
        }
        i++;
      }
      if (varName === "") return invalid;
      readsLength ||= varName.toLowerCase() === "request_length";
      readsBodyLength ||= varName.toLowerCase() === "content_length";
      const resolved = resolve(varName, scope);
      if (resolved === null) {
        return { ok: false, error: `unknown "${varName}" variable` };
      }
      if (typeof resolved === "function") ops.push(resolved);
      else {
        ops.push(variableOp(resolved, escape));
        readsFields ||= resolved.readsFields === true;
      }
    }
  }
  return {
    ok: true,
    format: {
      name,
      escape,
      text: args.slice(first).join(""),
      readsFields,
      readsLength,
      readsBodyLength,
      ops,
    },
  };
}

/** A name's log value (never escaped), or its variable; `null` when unknown. */
function resolve(
  varName: string,
  scope: LogVariableScope | null,
): ((record: LogRecord) => string) | LogVariable | null {
  // nginx matches its log values by exact name; other names are variables,
  // looked up in lower case, and nginx's variables of these names print the
  // same values.
  const lower = varName.toLowerCase();
  const own = recordName(lower);
  if (own !== null) return own.value ?? own.variable;
  return scope?.variable(lower) ?? null;
}

/**
 * Writes one line of a format, without the newline.
 *
 * @param format The compiled format.
 * @param record The request's facts.
 * @returns The line.
 */
export function formatLogLine(format: LogFormat, record: LogRecord): string {
  let out = "";
  const ops = format.ops;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    out += typeof op === "string" ? op : op(record);
  }
  return out;
}

/** nginx's predefined `combined` (`ngx_http_combined_fmt`). */
export const COMBINED: LogFormat = (() => {
  const r = compileLogFormat("combined", [
    '$remote_addr - $remote_user [$time_local] "$request" $status ' +
    '$body_bytes_sent "$http_referer" "$http_user_agent"',
  ]);
  if (!r.ok) throw new Error(r.error);
  return r.format;
})();
