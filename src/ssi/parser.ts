/**
 * nginx's SSI command parser (`ngx_http_ssi_parse`): a state machine over
 * the body's bytes, resumable at any byte, so a command split across reads
 * parses as one. Text outside commands goes to the sink as it is; a
 * command `<!--#name key="value" … -->` goes as its name and parameters;
 * a malformed one as an error after its `-->`, with nginx's message logged
 * where nginx logs it. Memory is bounded whatever the body: a name of 32
 * bytes (`NGX_HTTP_SSI_COMMAND_LEN`), keys of 32 (`NGX_HTTP_SSI_PARAM_LEN`),
 * values of `ssi_value_length`, and 17 parameters kept (one past
 * `NGX_HTTP_SSI_MAX_PARAMS`, which is all the command check needs; nginx
 * keeps every one in the request's pool).
 *
 * Names, keys and values are byte strings (one char per byte), as nginx
 * compares them.
 *
 * @module
 */

import { byteStringFromBytes } from "../runtime/mod.ts";

/** `NGX_HTTP_SSI_COMMAND_LEN`. */
export const COMMAND_LEN = 32;
/** `NGX_HTTP_SSI_PARAM_LEN`. */
export const PARAM_LEN = 32;
/** `NGX_HTTP_SSI_MAX_PARAMS`. */
export const MAX_PARAMS = 16;

/** One parameter of a command. */
export interface SsiParam {
  /** The key, as written. */
  key: string;
  /** The value between the quotes, backslashes kept (evaluation reads them). */
  value: string;
}

/** A command as parsed. */
export interface SsiCommand {
  /** Its name. */
  name: string;
  /** The first {@linkcode MAX_PARAMS} + 1 parameters. */
  params: SsiParam[];
  /** How many parameters it had. */
  count: number;
}

/** Where the parser sends what it finds. */
export interface ParserSink {
  /** Text outside commands: `bytes[start, end)`. */
  text(bytes: Uint8Array, start: number, end: number): void;
  /** A command, after its `-->`. */
  command(command: SsiCommand): void;
  /** A malformed command ended (`NGX_HTTP_SSI_ERROR`): the error message goes out. */
  failed(): void;
  /** An error line (`[error]`), as nginx logs it while parsing. */
  log(message: string): void;
}

const enum S {
  Start,
  Tag,
  Comment0,
  Comment1,
  Sharp,
  Precommand,
  Command,
  Preparam,
  Param,
  Preequal,
  Prevalue,
  DoubleQuoted,
  Quoted,
  QuotedSymbol,
  Postparam,
  CommentEnd0,
  CommentEnd1,
  Error,
  ErrorEnd0,
  ErrorEnd1,
}

/** What {@linkcode SsiParser.run} does after a byte. */
type Next = 0 | 1 | 2;
/** Go on. */
const ON = 0;
/** A command or an error ended: return to the caller. */
const ENDED = 1;
/** Read the byte again, as text. */
const AGAIN = 2;

/** `<!--`, the bytes a partial match stands for. */
const OPENING = new Uint8Array([0x3c, 0x21, 0x2d, 0x2d]);

const LT = 0x3c;
const DASH = 0x2d;

function isSpace(ch: number): boolean {
  return ch === 0x20 || ch === 0x0d || ch === 0x0a || ch === 0x09;
}

/**
 * The parser of one response body.
 *
 * @example Usage
 * ```ts
 * import { SsiParser, type SsiCommand } from "./parser.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const seen: (string | SsiCommand)[] = [];
 * const sink = {
 *   text: (b: Uint8Array, s: number, e: number) => seen.push(new TextDecoder().decode(b.subarray(s, e))),
 *   command: (c: SsiCommand) => seen.push(c),
 *   failed: () => seen.push("!"),
 *   log: (m: string) => seen.push(m),
 * };
 * const parser = new SsiParser(255);
 * const body = new TextEncoder().encode('a<!--# echo var="host" -->b');
 * for (let at = 0; at < body.length;) at = parser.run(body, at, sink);
 * deepStrictEqual(seen, ["a", { name: "echo", params: [{ key: "var", value: "host" }], count: 1 }, "b"]);
 * ```
 */
export class SsiParser {
  #state = S.Start;
  #saved = S.Start;
  /** Bytes of `<!--` matched so far and not yet sent. */
  #looked = 0;
  #name = "";
  #params: SsiParam[] = [];
  #count = 0;
  #key = "";
  #value: Uint8Array;
  #valueLength = 0;
  readonly #maxValue: number;

  /** @param valueLength `ssi_value_length`. */
  constructor(valueLength: number) {
    this.#maxValue = valueLength;
    // Grown as values need it: a large `ssi_value_length` costs nothing
    // until a body sends such a value.
    this.#value = new Uint8Array(Math.min(valueLength, 256));
  }

  /** Whether the body so far ended outside any command. */
  get idle(): boolean {
    return this.#state === S.Start;
  }

  /**
   * Parses `bytes` from `at`, stopping after a command or an error ends so
   * the caller can send what it made before going on.
   *
   * @param bytes A piece of the body.
   * @param at Where to start in it.
   * @param sink Where text, commands and errors go.
   * @returns Where to go on (`bytes.length` when it is all read).
   */
  run(bytes: Uint8Array, at: number, sink: ParserSink): number {
    let p = at;
    const last = bytes.length;
    while (p < last) {
      if (this.#state === S.Start) {
        // The tight loop: text up to the next `<`.
        const lt = bytes.indexOf(LT, p);
        const end = lt < 0 ? last : lt;
        if (end > p) sink.text(bytes, p, end);
        if (lt < 0) return last;
        this.#looked = 1;
        this.#state = S.Tag;
        p = lt + 1;
        continue;
      }
      const ch = bytes[p++]!;
      const next = this.#step(ch, sink);
      if (next === ENDED) return p;
      // A partial `<!--` that did not go on: the byte is text.
      if (next === AGAIN) p--;
    }
    return p;
  }

  /**
   * The end of the body: a partial `<!--` is dropped, as nginx drops the
   * bytes it held back when the last buffer ends (so is an unfinished
   * command).
   */
  end(): void {
    this.#looked = 0;
    this.#state = S.Start;
  }

  /** One byte past the text state: what the caller does next. */
  #step(ch: number, sink: ParserSink): Next {
    switch (this.#state) {
      case S.Tag:
        if (ch === 0x21) {
          this.#looked = 2;
          this.#state = S.Comment0;
        } else return this.#mismatch(ch, sink);
        return ON;
      case S.Comment0:
        if (ch === DASH) {
          this.#looked = 3;
          this.#state = S.Comment1;
        } else return this.#mismatch(ch, sink);
        return ON;
      case S.Comment1:
        if (ch === DASH) {
          this.#looked = 4;
          this.#state = S.Sharp;
        } else return this.#mismatch(ch, sink);
        return ON;
      case S.Sharp:
        if (ch === 0x23) {
          this.#looked = 0;
          this.#state = S.Precommand;
        } else return this.#mismatch(ch, sink);
        return ON;
      case S.Precommand:
        if (!isSpace(ch)) {
          this.#name = String.fromCharCode(ch);
          this.#params = [];
          this.#count = 0;
          this.#state = S.Command;
        }
        return ON;
      case S.Command:
        if (isSpace(ch)) this.#state = S.Preparam;
        else if (ch === DASH) this.#state = S.CommentEnd0;
        else if (this.#name.length === COMMAND_LEN) {
          sink.log(
            `the "${this.#name}${
              String.fromCharCode(ch)
            }..." SSI command is too long`,
          );
          this.#state = S.Error;
        } else this.#name += String.fromCharCode(ch);
        return ON;
      case S.Preparam:
        if (isSpace(ch)) return ON;
        if (ch === DASH) {
          this.#state = S.CommentEnd0;
          return ON;
        }
        this.#key = String.fromCharCode(ch);
        this.#valueLength = 0;
        this.#count++;
        this.#state = S.Param;
        return ON;
      case S.Param:
        if (isSpace(ch)) this.#state = S.Preequal;
        else if (ch === 0x3d) this.#state = S.Prevalue;
        else if (ch === DASH) {
          this.#state = S.ErrorEnd0;
          sink.log(
            `unexpected "-" symbol after "${this.#key}" parameter in "${this.#name}" SSI command`,
          );
        } else if (this.#key.length === PARAM_LEN) {
          this.#state = S.Error;
          sink.log(
            `too long "${this.#key}${
              String.fromCharCode(ch)
            }..." parameter in "${this.#name}" SSI command`,
          );
        } else this.#key += String.fromCharCode(ch);
        return ON;
      case S.Preequal:
        if (isSpace(ch)) return ON;
        if (ch === 0x3d) {
          this.#state = S.Prevalue;
          return ON;
        }
        this.#state = ch === DASH ? S.ErrorEnd0 : S.Error;
        sink.log(
          `unexpected "${
            String.fromCharCode(ch)
          }" symbol after "${this.#key}" parameter in "${this.#name}" SSI command`,
        );
        return ON;
      case S.Prevalue:
        if (isSpace(ch)) return ON;
        if (ch === 0x22) this.#state = S.DoubleQuoted;
        else if (ch === 0x27) this.#state = S.Quoted;
        else {
          this.#state = ch === DASH ? S.ErrorEnd0 : S.Error;
          sink.log(
            `unexpected "${
              String.fromCharCode(ch)
            }" symbol before value of "${this.#key}" parameter in "${this.#name}" SSI command`,
          );
        }
        return ON;
      case S.DoubleQuoted:
      case S.Quoted: {
        if (ch === (this.#state === S.DoubleQuoted ? 0x22 : 0x27)) {
          this.#state = S.Postparam;
          return ON;
        }
        if (ch === 0x5c) {
          // The backslash is kept: evaluation reads the escape.
          this.#saved = this.#state;
          this.#state = S.QuotedSymbol;
        }
        this.#store(ch, sink);
        return ON;
      }
      case S.QuotedSymbol:
        this.#state = this.#saved;
        this.#store(ch, sink);
        return ON;
      case S.Postparam:
        if (this.#params.length <= MAX_PARAMS) {
          this.#params.push({ key: this.#key, value: this.#valueText() });
        }
        if (isSpace(ch)) this.#state = S.Preparam;
        else if (ch === DASH) this.#state = S.CommentEnd0;
        else {
          sink.log(
            `unexpected "${
              String.fromCharCode(ch)
            }" symbol after "${this.#valueText()}" value of "${this.#key}" parameter in "${this.#name}" SSI command`,
          );
          this.#state = S.Error;
        }
        return ON;
      case S.CommentEnd0:
        if (ch === DASH) this.#state = S.CommentEnd1;
        else this.#unexpected(ch, sink);
        return ON;
      case S.CommentEnd1:
        if (ch !== 0x3e) {
          this.#unexpected(ch, sink);
          return ON;
        }
        this.#state = S.Start;
        sink.command({
          name: this.#name,
          params: this.#params,
          count: this.#count,
        });
        this.#params = [];
        return ENDED;
      case S.Error:
        if (ch === DASH) this.#state = S.ErrorEnd0;
        return ON;
      case S.ErrorEnd0:
        this.#state = ch === DASH ? S.ErrorEnd1 : S.Error;
        return ON;
      case S.ErrorEnd1:
        if (ch !== 0x3e) {
          this.#state = S.Error;
          return ON;
        }
        this.#state = S.Start;
        this.#params = [];
        sink.failed();
        return ENDED;
      default:
        return ON;
    }
  }

  /** A byte of a value, or nginx's error past `ssi_value_length`. */
  #store(ch: number, sink: ParserSink): void {
    if (this.#valueLength === this.#maxValue) {
      sink.log(
        `too long "${this.#valueText()}${
          String.fromCharCode(ch)
        }..." value of "${this.#key}" parameter in "${this.#name}" SSI command`,
      );
      this.#state = S.Error;
      return;
    }
    if (this.#valueLength === this.#value.length) {
      const grown = new Uint8Array(
        Math.min(this.#maxValue, this.#value.length * 2),
      );
      grown.set(this.#value);
      this.#value = grown;
    }
    this.#value[this.#valueLength++] = ch;
  }

  #valueText(): string {
    return byteStringFromBytes(this.#value.subarray(0, this.#valueLength));
  }

  #unexpected(ch: number, sink: ParserSink): void {
    sink.log(
      `unexpected "${
        String.fromCharCode(ch)
      }" symbol in "${this.#name}" SSI command`,
    );
    this.#state = S.Error;
  }

  /**
   * A partial `<!--` that did not go on: its bytes are text, and a `<`
   * starts another; any other byte is read again as text.
   */
  #mismatch(ch: number, sink: ParserSink): Next {
    sink.text(OPENING, 0, this.#looked);
    if (ch === LT) {
      this.#looked = 1;
      this.#state = S.Tag;
      return ON;
    }
    this.#looked = 0;
    this.#state = S.Start;
    return AGAIN;
  }
}
