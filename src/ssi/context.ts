/**
 * What one SSI-filtered response runs: the commands of
 * `ngx_http_ssi_filter_module` over the parser's findings, in the order
 * and with the checks of `ngx_http_ssi_body_filter` (unknown command,
 * context of `elif`/`else`/`endif`, parameter count, names, duplicates,
 * mandatory ones), each failure an `[error]` line and the `errmsg` text in
 * the body unless `ssi_silent_errors` is on.
 *
 * `include virtual=` and `file=` run as subrequests through the engine
 * (`SsiRequest.include`); a `block`'s text is kept for `include … stub=`
 * (`blocks.ts`).
 *
 * What a body can make it hold is bounded: `set` variables (and named
 * captures) together up to `MAX_STATE` bytes (`store.ts`), and an
 * evaluated value up to as much; past that the command fails with an
 * error line.
 *
 * @module
 */

import type { RequestVars } from "../engine/mod.ts";
import { fieldBytes, fieldText } from "../runtime/mod.ts";
import type { SsiConf } from "./conf.ts";
import { escapeEntity, escapeUrl } from "./encode.ts";
import { evaluateIf, evaluateString, type SsiLookup } from "./evaluate.ts";
import type { ParserSink, SsiCommand } from "./parser.ts";
import {
  asciiLower,
  checkCommand,
  COND_ELSE,
  COND_IF,
  includeTarget,
} from "./commands.ts";
import { DEFAULT_TIMEFMT, formatDate } from "./timefmt.ts";
import { includeUri } from "./include_uri.ts";
import { MAX_STATE, SsiStore, STATE_EXCEEDED } from "./store.ts";
import { MAX_BLOCK_BYTES } from "./blocks.ts";

/** nginx's default `errmsg`. */
const ERRMSG = "[an error occurred while processing the directive]";

/** What the context needs of the request. */
export interface SsiRequest {
  /** The location's settings. */
  conf: SsiConf;
  /** The request's variables. */
  vars: RequestVars;
  /** Writes an `[error]` line with the request's context. */
  log(message: string): void;
  /** The clock, for `$date_local` and `$date_gmt`. */
  now(): number;
  /**
   * Runs an `include` as a subrequest: its response (whose body goes in
   * the command's place), or the error line when no more may be made.
   * With a `stub`, a subrequest that ends in an error the gateway answers
   * itself (nginx's page not made yet when `ngx_http_ssi_stub_output`
   * runs) answers with the stub instead, through that location's filters.
   */
  include?: (
    uri: string,
    args: string,
    signal: AbortSignal,
    stub?: Uint8Array,
  ) => Promise<Response> | string;
  /** Aborted when the client leaves: an include waiting is given up. */
  signal?: AbortSignal;
  /** The main request's variables, shared with its includes. */
  store?: SsiStore;
}

/**
 * The state of one response's commands; a {@linkcode ParserSink} whose
 * output collects in {@linkcode SsiContext.out}.
 */
export class SsiContext implements ParserSink {
  /** The bytes made so far and not yet sent. */
  out: Uint8Array[] = [];
  /** Their length. */
  outBytes = 0;
  /**
   * An include's answer, whose body goes out after {@linkcode out} (its
   * `stub` when that body is empty), or into the variable `set` names.
   */
  pending:
    | {
      answer: Promise<Response>;
      set: string | null;
      stub: Uint8Array | null;
    }
    | null = null;
  readonly #r: SsiRequest;
  #output = true;
  #chosen = false;
  #conditional = 0;
  #inBlock = false;
  #encoding: "none" | "url" | "entity" = "entity";
  #timefmt = DEFAULT_TIMEFMT;
  #errmsg = ERRMSG;
  readonly #store: SsiStore;
  readonly #lookup: SsiLookup = (name) => this.#variable(name);

  /** @param request The request and its location's settings. */
  constructor(request: SsiRequest) {
    this.#r = request;
    this.#store = request.store ?? new SsiStore();
  }

  /** Text outside commands: sent where the output is on. */
  text(bytes: Uint8Array, start: number, end: number): void {
    if (!this.#output) {
      if (this.#inBlock) {
        this.#keep(this.#store.blocks.text(bytes.subarray(start, end)));
      }
      return;
    }
    this.out.push(bytes.subarray(start, end));
    this.outBytes += end - start;
  }

  /** A malformed command: nginx sends its error text whatever the output. */
  failed(): void {
    this.#error();
  }

  /** An error line. */
  log(message: string): void {
    // Bytes of the body, as the text log lines are written from.
    this.#r.log(fieldText(message));
  }

  /** A command, checked and run as `ngx_http_ssi_body_filter` does. */
  command(command: SsiCommand): void {
    const checked = checkCommand(command, {
      output: this.#output,
      inBlock: this.#inBlock,
      conditional: this.#conditional,
    });
    if (checked.kind === "error") return this.#fail(checked.message);
    if (checked.kind === "run") this.#run(command.name, checked.params);
    else if (checked.kind === "keep") {
      this.#keep(this.#store.blocks.command(command));
    }
  }

  /** A block's text went past the bound: one line per main request. */
  #keep(kept: boolean): void {
    if (kept || !this.#store.blocks.firstDrop()) return;
    this.log(`the SSI blocks exceed ${MAX_BLOCK_BYTES} bytes`);
  }

  #run(name: string, params: Map<string, string>): void {
    switch (name) {
      case "echo":
        return this.#echo(params);
      case "set":
        return this.#set(params);
      case "config": {
        const timefmt = params.get("timefmt");
        if (timefmt !== undefined) this.#timefmt = timefmt;
        const errmsg = params.get("errmsg");
        if (errmsg !== undefined) this.#errmsg = errmsg;
        return;
      }
      case "if":
      case "elif":
        return this.#if(name, params.get("expr")!);
      case "else":
        this.#output = !this.#chosen;
        this.#conditional = COND_ELSE;
        return;
      case "endif":
        this.#output = true;
        this.#chosen = false;
        this.#conditional = 0;
        return;
      case "block":
        this.#store.blocks.open(params.get("name")!);
        this.#output = false;
        this.#inBlock = true;
        return;
      case "endblock":
        this.#output = true;
        this.#inBlock = false;
        return;
      default:
        return this.#include(params);
    }
  }

  /** `ngx_http_ssi_echo`. */
  #echo(params: Map<string, string>): void {
    const name = asciiLower(params.get("var")!);
    let value = this.#variable(name);
    if (value === undefined) value = params.get("default") ?? "(none)";
    if (value === "") return;
    const encoding = params.get("encoding");
    if (encoding === "none" || encoding === "url" || encoding === "entity") {
      this.#encoding = encoding;
    } else if (encoding !== undefined) {
      this.log(`unknown encoding "${encoding}" in the "echo" command`);
    }
    this.#send(
      this.#encoding === "url"
        ? escapeUrl(value)
        : this.#encoding === "entity"
        ? escapeEntity(value)
        : value,
    );
  }

  /** `ngx_http_ssi_set`. */
  #set(params: Map<string, string>): void {
    const value = this.#evaluate(params.get("value")!);
    if (value === null) return;
    const name = asciiLower(params.get("var")!);
    if (!this.#store.assign(name, value)) {
      this.#fail(STATE_EXCEEDED);
    }
  }

  /** `ngx_http_ssi_if` for `if` and `elif`. */
  #if(name: string, expr: string): void {
    if (name === "if" && this.#conditional !== 0) {
      return this.#fail('the "if" command inside the "if" command');
    }
    if (this.#chosen) {
      this.#output = false;
      return;
    }
    const verdict = evaluateIf(expr, this.#lookup, MAX_STATE);
    if (!verdict.ok) return this.#fail(verdict.message);
    if (verdict.captures !== undefined) {
      this.#store.captures = verdict.captures.groups;
      for (const [key, value] of Object.entries(verdict.captures.named)) {
        if (!this.#store.assign(key, value)) {
          return this.#fail(STATE_EXCEEDED);
        }
      }
    }
    this.#output = verdict.value;
    if (verdict.value) this.#chosen = true;
    this.#conditional = COND_IF;
  }

  /**
   * `ngx_http_ssi_include`: the checks, the URI, then the subrequest,
   * whose body the filter sends in the command's place, or keeps in the
   * `set` variable (made empty first, as nginx makes it); `stub` names
   * the block shown when that body is empty or the subrequest fails.
   */
  #include(params: Map<string, string>): void {
    const target = includeTarget(params);
    if (!target.ok) return this.#fail(target.message);
    const value = this.#evaluate(target.uri);
    if (value === null) return;
    const include = this.#r.include;
    if (include === undefined) {
      return this.#fail(`no subrequests to include "${value}"`);
    }
    const uri = includeUri(value, this.#r.vars.uri);
    if (!uri.ok) return this.#fail(uri.message);
    const name = params.get("stub");
    let stub: Uint8Array | null = null;
    if (name !== undefined) {
      stub = this.#store.blocks.find(name);
      if (stub === null) {
        return this.#fail(`"stub"="${name}" for "include" not found`);
      }
    }
    const set = params.get("set");
    const variable = set === undefined ? null : asciiLower(set);
    if (variable !== null && !this.#store.variables.has(variable)) {
      if (!this.#store.assign(variable, "")) {
        return this.#fail(STATE_EXCEEDED);
      }
    }
    const signal = this.#r.signal ?? new AbortController().signal;
    const made = stub === null
      ? include(uri.uri, uri.args, signal)
      : include(uri.uri, uri.args, signal, stub);
    if (typeof made === "string") return this.#fail(made);
    this.pending = { answer: made, set: variable, stub };
  }

  /**
   * Keeps an include's answer in its `set` variable
   * (`ngx_http_ssi_set_variable`).
   *
   * @param name The variable.
   * @param value The answer's body, a byte string.
   */
  keep(name: string, value: string): void {
    if (!this.#store.assign(name, value)) {
      this.log(STATE_EXCEEDED);
    }
  }

  /** A variable as SSI reads it: captures, `set` ones, then the request's. */
  #variable(name: string): string | undefined {
    if (name.length === 1 && name >= "0" && name <= "9") {
      const capture = this.#store.captures[name.charCodeAt(0) - 0x30];
      if (capture !== undefined) return capture;
    }
    const own = this.#store.variables.get(name);
    if (own !== undefined) return own;
    if (name === "date_local" || name === "date_gmt") {
      return formatDate(this.#timefmt, this.#r.now(), name === "date_gmt") ??
        undefined;
    }
    const read = this.#r.conf.scope.reader(name);
    if (read === null) return undefined;
    const value = read(this.#r.vars);
    // The engine's text as the bytes nginx holds.
    return value === undefined ? undefined : fieldBytes(value);
  }

  /** Evaluates a value; `null` after its error. */
  #evaluate(text: string): string | null {
    const result = evaluateString(text, this.#lookup, MAX_STATE);
    if (result.ok) return result.value;
    this.#fail(result.message);
    return null;
  }

  #fail(message: string): void {
    this.log(message);
    this.#error();
  }

  /** The error text, unless `ssi_silent_errors`. */
  #error(): void {
    if (!this.#r.conf.silentErrors) this.#send(this.#errmsg);
  }

  /** A byte string made by a command. */
  #send(text: string): void {
    if (text === "") return;
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    this.out.push(bytes);
    this.outBytes += bytes.length;
  }
}
