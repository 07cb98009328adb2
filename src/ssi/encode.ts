/**
 * The encodings of the `echo` command: `url` (`ngx_escape_uri` with
 * `NGX_ESCAPE_HTML`) and `entity` (`ngx_escape_html`). Values are byte
 * strings (one char per byte).
 *
 * @module
 */

import { escapeBytes } from "../routing/mod.ts";

/**
 * `NGX_ESCAPE_HTML`'s table, one bit per byte: controls, space, `"`, `#`,
 * `%`, `'`, `<`, `>`, `\`, `^`, backquote, `{`, `|`, `}`, DEL and every
 * byte past it.
 */
const HTML = [
  0xffffffff,
  0x500000ad,
  0x50000000,
  0xb8000001,
  0xffffffff,
  0xffffffff,
  0xffffffff,
  0xffffffff,
];

/**
 * `encoding="url"`.
 *
 * @param value The bytes.
 * @returns Them with nginx's escapes.
 *
 * @example Usage
 * ```ts
 * import { escapeUrl } from "./encode.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeUrl("a b<c>/?&=\xe9"), "a%20b%3Cc%3E/?&=%E9");
 * ```
 */
export function escapeUrl(value: string): string {
  return escapeBytes(value, HTML);
}

const ENTITIES: Readonly<Record<string, string>> = {
  "<": "&lt;",
  ">": "&gt;",
  "&": "&amp;",
  '"': "&quot;",
};

/**
 * `encoding="entity"`, the default.
 *
 * @param value The bytes.
 * @returns Them with `<`, `>`, `&` and `"` as entities.
 *
 * @example Usage
 * ```ts
 * import { escapeEntity } from "./encode.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeEntity(`<a href="x">&'</a>`), "&lt;a href=&quot;x&quot;&gt;&amp;'&lt;/a&gt;");
 * ```
 */
export function escapeEntity(value: string): string {
  return value.replace(/[<>&"]/g, (c) => ENTITIES[c]!);
}
