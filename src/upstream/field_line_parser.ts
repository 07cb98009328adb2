/**
 * The one parser of an upstream head's field lines
 * (`ngx_http_parse_header_line`): an HTTP response's after its status line
 * (`http1.ts`) and a FastCGI application's CGI head; the scan for the odd
 * bytes both look for, and the error a refused head raises.
 *
 * @module
 */

import { escapeControls } from "../runtime/mod.ts";
import { escapeErrorLogText } from "../log/mod.ts";

/** Why a response head was rejected, in nginx's words. */
export class InvalidResponseError extends Error {
  /**
   * @param message nginx's message, e.g. `upstream sent too big header`.
   */
  constructor(message: string) {
    super(message);
    this.name = "InvalidResponseError";
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** NUL, or a CR that does not end a line. */
export const BAD_IN_LINE: RegExp = /\0|\r(?!\n)/;

/** A control byte other than the lines' CR LF, tab and NUL (refused above). */
// deno-lint-ignore no-control-regex -- control bytes are what is looked for
const CONTROL_IN_HEAD = /[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/;

const FRAMING_FIELD = /^(?:content-length|transfer-encoding)$/i;

/**
 * The field lines of a head (`ngx_http_parse_header_line`), from `next`
 * up to its empty line: one parser for every upstream head, an HTTP
 * response's after its status line and a FastCGI application's CGI head.
 *
 * @param text The head as a byte string (one char per byte), its empty
 * line included.
 * @param next Where the first field line starts.
 * @param odd {@linkcode oddBytes} of the head.
 * @returns The fields, names as sent, values trimmed; one `Content-Type`,
 * the last line's value where the first line was.
 * @throws {InvalidResponseError} On a line nginx refuses, with its message.
 */
export function parseFieldLines(
  text: string,
  next: number,
  odd: boolean,
): [string, string][] {
  // NUL or a stray CR is looked for per line only when the head has one (one
  // scan of the text instead of a test per line).
  const suspect = odd && BAD_IN_LINE.test(text);
  // A control byte in a value (nginx relays it) ends the process in Deno's
  // response writer (a panic, "invalid response header value"): such a
  // value is escaped as the gateway's own fields are, here where every
  // path to the client starts. One scan per head. The framing fields are
  // read, never relayed as they are: kept for nginx's messages about them.
  const controls = odd && CONTROL_IN_HEAD.test(text);
  // Fields are cut straight out of the text (no array of lines): this runs
  // for every proxied response.
  const fields: [string, string][] = [];
  // Where the Content-Type is: a later line replaces its value, as each
  // line replaces r->headers_out.content_type in nginx
  // (ngx_http_upstream_copy_content_type), where a Headers object would
  // join them into one value no client reads.
  let typeAt = -1;
  while (true) {
    const start = next;
    next = text.indexOf("\n", start) + 1;
    const stop = lineEnd(text, next);
    if (stop === start) break; // the empty line
    const colon = text.indexOf(":", start);
    const hasColon = colon >= start && colon < stop;
    const name = text.slice(start, hasColon ? colon : stop);
    if (
      !TOKEN.test(name) ||
      (suspect && /[\0\r]/.test(text.slice(start, stop)))
    ) {
      throw new InvalidResponseError(invalidHeader(text.slice(start, stop)));
    }
    // A line without a colon is a field without a value, as in nginx.
    const value = hasColon ? trimOws(text, colon + 1, stop) : "";
    const field: [string, string] = [
      name,
      controls && !FRAMING_FIELD.test(name) ? escapeControls(value) : value,
    ];
    if (name.length === 12 && name.toLowerCase() === "content-type") {
      if (typeAt >= 0) {
        fields[typeAt] = field;
        continue;
      }
      typeAt = fields.length;
    }
    fields.push(field);
  }
  return fields;
}

/**
 * Whether a head holds what either scan below looks for: NUL, a CR not
 * before LF, or another control byte than tab, CR and LF. One loop over the
 * bytes of every head (cheaper than a regular expression over its text,
 * profiled); the two scans run only when it finds one.
 */
export function oddBytes(bytes: Uint8Array, end: number): boolean {
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b >= 0x20) {
      if (b === 0x7f) return true;
    } else if (b !== 0x09 && b !== 0x0a) {
      if (b !== 0x0d || i + 1 >= end || bytes[i + 1] !== 0x0a) return true;
    }
  }
  return false;
}

/** Where the line that ends before `next` ends, without its CR. */
export function lineEnd(text: string, next: number): number {
  return text.charCodeAt(next - 2) === 13 ? next - 2 : next - 1;
}

/**
 * nginx's message for a field line it cannot parse: the line up to the
 * offending byte, then that byte as `\xhh...`
 * (`ngx_http_proxy_process_header`). A byte that is only not a token
 * character (nginx relays those, `Headers` cannot hold them) gets the whole
 * line, its control bytes escaped the same way.
 */
function invalidHeader(line: string): string {
  const colon = line.indexOf(":");
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    const inName = colon < 0 || i <= colon;
    if (
      c === 0 || c === 13 ||
      (inName && (c <= 0x20 || c === 0x7f || (c === 0x3a && i === 0)))
    ) {
      return `upstream sent invalid header: "${
        escapeErrorLogText(line.slice(0, i), "latin1")
      }\\x${c.toString(16).padStart(2, "0")}..."`;
    }
  }
  return `upstream sent invalid header: "${
    escapeErrorLogText(line, "latin1")
  }"`;
}

/** A field value without leading and trailing SP and HTAB (RFC 9110 §5.5). */
function trimOws(text: string, start: number, end: number): string {
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}
