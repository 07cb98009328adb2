/**
 * SSI's `block … endblock` (`ngx_http_ssi_block`): what a block holds is
 * kept for an `include … stub="name"`, which shows it in place of an
 * include that fails or is empty. As nginx keeps it: the text between the
 * two commands, and each command inside written back as text
 * (`<!--#name key="value" -->`, not run), in the main request's list, a
 * page and its includes alike; the first block of a name is the one a
 * stub finds.
 *
 * What blocks may hold is bounded ({@linkcode MAX_BLOCK_BYTES} together,
 * nginx has no bound): past it a block's text is dropped, with one error
 * line per main request (a page of thousands of blocks wrote one per block).
 *
 * @module
 */

import { isBuiltInError, makeResponse } from "../response/mod.ts";
import type { SsiCommand } from "./parser.ts";

/** The most bytes all blocks of one main request hold together. */
export const MAX_BLOCK_BYTES = 65536;

interface Block {
  readonly name: string;
  pieces: Uint8Array[];
  size: number;
}

/**
 * The blocks of one main request.
 *
 * @example Usage
 * ```ts
 * import { SsiBlocks } from "./blocks.ts";
 * import { deepStrictEqual, strictEqual } from "node:assert/strict";
 *
 * const blocks = new SsiBlocks();
 * blocks.open("one");
 * blocks.text(new TextEncoder().encode("[stub]"));
 * blocks.command({ name: "echo", params: [{ key: "var", value: "uri" }], count: 1 });
 * deepStrictEqual(
 *   new TextDecoder().decode(blocks.find("one")!),
 *   '[stub]<!--#echo var="uri" -->',
 * );
 * strictEqual(blocks.find("two"), null);
 * ```
 */
export class SsiBlocks {
  readonly #list: Block[] = [];
  #bytes = 0;
  #dropped = false;

  /**
   * Whether a drop is the main request's first, the one that writes the
   * error line: later ones, in any block of the page or its includes, stay
   * silent.
   *
   * @returns `true` the first time only.
   */
  firstDrop(): boolean {
    if (this.#dropped) return false;
    this.#dropped = true;
    return true;
  }

  /**
   * A new block: what follows until `endblock` is its.
   *
   * @param name Its name, as written.
   */
  open(name: string): void {
    this.#list.push({ name, pieces: [], size: 0 });
  }

  /**
   * Text inside the block opened last.
   *
   * @param bytes The text (copied).
   * @returns `false` when it did not fit the bound (dropped).
   */
  text(bytes: Uint8Array): boolean {
    const block = this.#list.at(-1);
    if (block === undefined || bytes.length === 0) return true;
    if (this.#bytes + bytes.length > MAX_BLOCK_BYTES) return false;
    this.#bytes += bytes.length;
    block.pieces.push(bytes.slice());
    block.size += bytes.length;
    return true;
  }

  /**
   * A command inside the block opened last, kept as its text
   * (`ngx_http_ssi_body_filter`'s "reconstruct the SSI command text").
   *
   * @param command The command as parsed.
   * @returns `false` when it did not fit the bound (dropped).
   */
  command(command: SsiCommand): boolean {
    let text = `<!--#${command.name}`;
    for (const { key, value } of command.params) text += ` ${key}="${value}"`;
    text += " -->";
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return this.text(bytes);
  }

  /**
   * The first block of a name, its bytes joined.
   *
   * @param name The `stub` parameter, as written.
   * @returns Its bytes, or `null` when no block has that name.
   */
  find(name: string): Uint8Array | null {
    const block = this.#list.find((b) => b.name === name);
    if (block === undefined) return null;
    if (block.pieces.length !== 1) {
      const joined = new Uint8Array(block.size);
      let at = 0;
      for (const piece of block.pieces) {
        joined.set(piece, at);
        at += piece.length;
      }
      block.pieces = [joined];
    }
    return block.pieces[0] ?? new Uint8Array(0);
  }
}

/**
 * An include's answer with a `stub`: an error the gateway answers itself
 * (its page, `errorResponse`) becomes the stub, sent where nginx's
 * `ngx_http_ssi_stub_output` sends it, before the subrequest's special
 * response is made, so through that location's filters (its SSI runs the
 * stub's commands); any other answer as it is (the filter shows the stub
 * when its body is empty).
 *
 * @param answer The subrequest's answer.
 * @param stub The block's bytes.
 * @returns The answer, or the stub in its place.
 */
export function stubAnswer(answer: Response, stub: Uint8Array): Response {
  if (!isBuiltInError(answer)) return answer;
  answer.body?.cancel().catch(() => {});
  return makeResponse(stub.slice(), {
    status: answer.status,
    headers: { "content-type": "text/html" },
  });
}
