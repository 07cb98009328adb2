/**
 * The SSI commands' table (`ngx_http_ssi_commands`) and the checks
 * `ngx_http_ssi_body_filter` makes before a command runs: a known name,
 * the `if` context of `elif`/`else`/`endif`, at most
 * `NGX_HTTP_SSI_MAX_PARAMS` parameters, each known and given once, the
 * mandatory ones there; and `include`'s own checks.
 *
 * @module
 */

import { MAX_PARAMS, type SsiCommand } from "./parser.ts";

/** `NGX_HTTP_SSI_COND_IF`: after `if` or `elif`. */
export const COND_IF = 1;
/** `NGX_HTTP_SSI_COND_ELSE`: after `else`. */
export const COND_ELSE = 2;

/** A command's table entry (`ngx_http_ssi_command_t`). */
interface CommandSpec {
  /** Its parameters; the mandatory ones are marked. */
  params: Readonly<Record<string, boolean>>;
  /** The `if` level it must be in (`elif`, `else`: IF; `endif`: ELSE). */
  conditional: number;
  /** `endblock`: runs while a block hides the output. */
  block: boolean;
}

const COMMANDS: ReadonlyMap<string, CommandSpec> = new Map([
  [
    "include",
    spec({ virtual: false, file: false, wait: false, set: false, stub: false }),
  ],
  ["echo", spec({ var: true, default: false, encoding: false })],
  ["config", spec({ errmsg: false, timefmt: false })],
  ["set", spec({ var: true, value: true })],
  ["if", spec({ expr: true })],
  ["elif", spec({ expr: true }, COND_IF)],
  ["else", spec({}, COND_IF)],
  ["endif", spec({}, COND_ELSE)],
  ["block", spec({ name: true })],
  ["endblock", spec({}, 0, true)],
]);

function spec(
  params: Record<string, boolean>,
  conditional = 0,
  block = false,
): CommandSpec {
  return { params, conditional, block };
}

/** Where the parsed command stands. */
export interface CommandState {
  /** The output is on (not hidden by `if` or `block`). */
  output: boolean;
  /** Inside `block … endblock`. */
  inBlock: boolean;
  /** The `if` level: 0, {@linkcode COND_IF} or {@linkcode COND_ELSE}. */
  conditional: number;
}

/** What to do with a parsed command. */
export type Checked =
  | { kind: "run"; params: Map<string, string> }
  | { kind: "skip" }
  /** Inside `block`: kept as the block's text, not run. */
  | { kind: "keep" }
  | { kind: "error"; message: string };

/**
 * Checks a command as `ngx_http_ssi_body_filter` does before running it.
 *
 * @param command The command as parsed.
 * @param state The output and `if` state.
 * @returns Its parameters by name, or that it is skipped, or the error.
 *
 * @example Usage
 * ```ts
 * import { checkCommand } from "./commands.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const state = { output: true, inBlock: false, conditional: 0 };
 * deepStrictEqual(checkCommand({ name: "else", params: [], count: 0 }, state), {
 *   kind: "error",
 *   message: 'invalid context of SSI command: "else"',
 * });
 * ```
 */
export function checkCommand(
  command: SsiCommand,
  state: CommandState,
): Checked {
  const { name } = command;
  const cmd = COMMANDS.get(name);
  if (cmd === undefined) {
    return state.output
      ? { kind: "error", message: `invalid SSI command: "${name}"` }
      : { kind: "skip" };
  }
  // Hidden output runs only what changes it; a block's commands are kept
  // as its text, for `stub`.
  if (!state.output && !cmd.block) {
    if (state.inBlock) return { kind: "keep" };
    if (cmd.conditional === 0) return { kind: "skip" };
  }
  if (
    cmd.conditional !== 0 &&
    (state.conditional === 0 || state.conditional > cmd.conditional)
  ) {
    return error(`invalid context of SSI command: "${name}"`);
  }
  if (command.count > MAX_PARAMS) {
    return error(`too many SSI command parameters: "${name}"`);
  }
  const params = new Map<string, string>();
  for (const { key, value } of command.params) {
    if (!Object.hasOwn(cmd.params, key)) {
      return error(`invalid parameter name: "${key}" in "${name}" SSI command`);
    }
    if (params.has(key)) {
      return error(`duplicate "${key}" parameter in "${name}" SSI command`);
    }
    params.set(key, value);
  }
  for (const [key, mandatory] of Object.entries(cmd.params)) {
    if (mandatory && !params.has(key)) {
      return error(
        `mandatory "${key}" parameter is absent in "${name}" SSI command`,
      );
    }
  }
  return { kind: "run", params };
}

function error(message: string): Checked {
  return { kind: "error", message };
}

/**
 * `ngx_http_ssi_include`'s checks of its parameters.
 *
 * @param params The command's parameters.
 * @returns The URI to include (unevaluated), or nginx's error.
 */
export function includeTarget(
  params: ReadonlyMap<string, string>,
): { ok: true; uri: string } | { ok: false; message: string } {
  const virtual = params.get("virtual");
  const file = params.get("file");
  const wait = params.get("wait");
  const fail = (message: string) => ({ ok: false as const, message });
  if (virtual !== undefined && file !== undefined) {
    return fail(
      `inclusion may be either virtual="${virtual}" or file="${file}"`,
    );
  }
  if (virtual === undefined && file === undefined) {
    return fail('no parameter in "include" SSI command');
  }
  if (params.has("set") && params.has("stub")) {
    return fail(
      '"set" and "stub" cannot be used together in "include" SSI command',
    );
  }
  if (wait !== undefined) {
    if (virtual === undefined) {
      return fail(`"wait" cannot be used with file="${file}"`);
    }
    const answer = asciiLower(wait);
    if (answer !== "no" && answer !== "yes") {
      return fail(`invalid value "${wait}" in the "wait" parameter`);
    }
  }
  return { ok: true, uri: virtual ?? file! };
}

/**
 * ASCII letters in lower case, other bytes as they are (`ngx_hash_strlow`,
 * `ngx_strncasecmp`).
 *
 * @param text A byte string.
 * @returns It folded.
 */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}
