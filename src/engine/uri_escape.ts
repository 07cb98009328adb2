/**
 * The escaping `rewrite` applies to what it builds (`ngx_http_script.c`):
 * captures of a URI the client escaped are escaped again as arguments, and
 * a redirect is unescaped once before it is sent. `X-Accel-Redirect`'s URI
 * is unescaped the same way, plainly.
 *
 * @module
 */

/**
 * nginx's `r->quoted_uri || r->plus_in_uri`: the path as sent holds an
 * escape or a `+`.
 *
 * @param requestUri `$request_uri`.
 * @returns Whether captures of the URI are escaped again.
 */
export function uriWasQuoted(requestUri: string): boolean {
  for (let i = 0; i < requestUri.length; i++) {
    const c = requestUri.charCodeAt(i);
    if (c === 0x3f) return false; // `?`
    if (c === 0x25 || c === 0x2b) return true; // `%`, `+`
  }
  return false;
}

const encoder = new TextEncoder();
const HEX = "0123456789ABCDEF";

/**
 * `ngx_escape_uri(NGX_ESCAPE_ARGS)` of nginx 1.22: control bytes, space,
 * `"#%&+;<>?\^\`{|}`, DEL and every byte past ASCII (a char's UTF-8
 * bytes) become `%XX`.
 *
 * @param text A capture of the decoded URI.
 * @returns The escaped text.
 *
 * @example Usage
 * ```ts
 * import { escapeArgs } from "./uri_escape.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(escapeArgs("a&b=c d\r\né"), "a%26b=c%20d%0D%0A%C3%A9");
 * ```
 */
export function escapeArgs(text: string): string {
  if (!ARGS_ESCAPED.test(text)) return text;
  let out = "";
  for (const byte of encoder.encode(text)) {
    out += byte < 0x80 && !ARGS_ESCAPED.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}

// deno-lint-ignore no-control-regex -- control bytes are what is escaped
const ARGS_ESCAPED = /[\x00-\x20"#%&+;<>?\\^`{|}\x7f-\uffff]/;

/**
 * `ngx_unescape_uri(NGX_UNESCAPE_REDIRECT)`: up to the first `?`, an
 * escape of a printable char past `%` is decoded and any other kept; an
 * escape that decodes to `?` is decoded and ends the decoding; a broken
 * escape loses its `%` (and the digit before a bad second one).
 *
 * @param text The redirect as built.
 * @returns The redirect to send.
 *
 * @example Usage
 * ```ts
 * import { unescapeRedirect } from "./uri_escape.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(unescapeRedirect("/a%41%20%0A%3Fb%41?c%41"), "/aA%20%0A?b%41?c%41");
 * ```
 */
export function unescapeRedirect(text: string): string {
  return text.includes("%") ? unescape(text, true) : text;
}

/**
 * `ngx_unescape_uri(…, 0)`, as `ngx_http_parse_unsafe_uri` decodes an
 * `X-Accel-Redirect`: every escape is decoded to its byte (a `?` or a `/`
 * too); a broken escape loses its `%`, and a bad second digit takes the
 * first with it (`%zz` is `zz`, `%az` nothing, a last `%` nothing).
 *
 * @param bytes The text as bytes, one char each.
 * @returns The decoded bytes, one char each.
 *
 * @example Usage
 * ```ts
 * import { unescapeUri } from "./uri_escape.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(unescapeUri("/a%20b%2F%3F%FF%zz%az%"), "/a b/?\xffzz");
 * ```
 */
export function unescapeUri(bytes: string): string {
  return bytes.includes("%") ? unescape(bytes, false) : bytes;
}

/** ngx_unescape_uri's state machine, plain or for a redirect. */
function unescape(text: string, redirect: boolean): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (redirect && c === "?") return out + text.slice(i);
    if (c !== "%") {
      out += c;
      continue;
    }
    const high = hexDigit(text[i + 1]);
    if (high < 0) {
      // The char after a `%` that starts no escape is kept, the `%` not.
      if (i + 1 < text.length) out += text[i + 1];
      i++;
      continue;
    }
    const low = hexDigit(text[i + 2]);
    i += 2;
    if (low < 0) continue;
    const code = high * 16 + low;
    if (!redirect) {
      out += String.fromCharCode(code);
      continue;
    }
    if (code === 0x3f && /[a-fA-F]/.test(text[i]!)) {
      return out + "?" + text.slice(i + 1);
    }
    out += code > 0x25 && code < 0x7f
      ? String.fromCharCode(code)
      : text.slice(i - 2, i + 1);
  }
  return out;
}

function hexDigit(c: string | undefined): number {
  if (c === undefined) return -1;
  const code = c.charCodeAt(0);
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
