/**
 * What nginx checks of the request line before it reads the header fields
 * (`ngx_http_parse_request_line`, `ngx_http_alloc_large_header_buffer`,
 * `ngx_http_process_request_uri`): the method token, an absolute-form
 * target's scheme and authority, and the line's length against
 * `large_client_header_buffers`.
 *
 * @module
 */

import {
  DEFAULT_HEADER_BUFFERS,
  type HeaderBuffers,
  tooLongRequestLine,
} from "./header_buffers.ts";
import type { CheckEvent } from "./request_checks.ts";
import { isValidHost } from "./host.ts";

/** nginx's action while it reads the request line. */
export const READING_REQUEST_LINE = "reading client request line";

/**
 * nginx's method token: upper-case letters, `_` and `-`
 * (`ngx_http_parse_request_line`); anything else, lower case included, is
 * "client sent invalid method".
 */
const METHOD_TOKEN = /^[A-Z_-]+$/;

/** A verdict on the request line, before the header fields are read. */
export type LineVerdict =
  | { kind: "ok" }
  | {
    kind: "reject";
    /** 400 for the method or the target, 414 for the length. */
    status: 400 | 414;
    /** The `[info]` line, about the request line. */
    event: CheckEvent;
    /** The request as nginx logs it then (a 414 shows what it held). */
    request: string;
  };

const LINE_OK: LineVerdict = Object.freeze({ kind: "ok" });

/**
 * Checks the request line as nginx reads it: the method token, an
 * absolute-form target's scheme and authority (its characters as the
 * parser reads them, then its host as `ngx_http_validate_host` does), its
 * length against `large_client_header_buffers`.
 *
 * @param method The method as sent (`Deno.serve` keeps its case).
 * @param line The request line for the logs ({@linkcode requestLine}).
 * @param limits `large_client_header_buffers`.
 * @param absolute An absolute-form target's URL (`req.url`) and authority
 * (`absoluteAuthority`); `null` for origin-form.
 * @returns The verdict.
 *
 * @example Usage
 * ```ts
 * import { checkRequestLine } from "./request_line_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(checkRequestLine("GET", "GET / HTTP/1.1").kind, "ok");
 * strictEqual(checkRequestLine("get", "get / HTTP/1.1").kind, "reject");
 * const url = "http://x@a/h";
 * strictEqual(
 *   checkRequestLine("GET", `GET ${url} HTTP/1.1`, undefined, { url, authority: "x@a" }).kind,
 *   "reject",
 * );
 * ```
 */
export function checkRequestLine(
  method: string,
  line: string,
  limits: HeaderBuffers = DEFAULT_HEADER_BUFFERS,
  absolute: { url: string; authority: string } | null = null,
): LineVerdict {
  // The common methods are tokens: no regex run for them.
  const common = method === "GET" || method === "HEAD" || method === "POST";
  if (!common && !METHOD_TOKEN.test(method)) {
    return invalidLine("client sent invalid method", line);
  }
  const read = absolute === null ? READ : readAuthority(absolute);
  if (read === UNREADABLE) {
    return invalidLine("client sent invalid request", line);
  }
  const held = tooLongRequestLine(line, limits);
  if (held === null) {
    return read === READ
      ? LINE_OK
      : invalidLine("client sent invalid host in request line", line);
  }
  return {
    kind: "reject",
    status: 414,
    event: {
      level: "info",
      message: "client sent too long URI",
      action: READING_REQUEST_LINE,
    },
    request: held,
  };
}

/** A 400 while nginx reads the request line. */
function invalidLine(message: string, line: string): LineVerdict {
  return {
    kind: "reject",
    status: 400,
    event: { level: "info", message, action: READING_REQUEST_LINE },
    request: line,
  };
}

/** How an absolute-form target reads: fine, a parse error, a bad host. */
const READ = 0;
const UNREADABLE = 1;
const BAD_HOST = 2;

/** A scheme's first char: a letter (`sw_spaces_before_uri`). */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
/** What `sw_host` reads: letters, digits, `.` and `-`. */
const HOST_CHARS = /^[A-Za-z0-9.-]*/;
/** What `sw_host_ip_literal` reads: unreserved and sub-delims, `:`. */
const LITERAL = /^\[[A-Za-z0-9:._~!$&'()*+,;=-]*\]/;
/** `sw_port`: digits, none at all too. */
const PORT = /^(?::[0-9]*)?$/;

/**
 * An absolute-form target as `ngx_http_parse_request_line` reads its
 * scheme and authority (`sw_schema` to `sw_port`): a `@`, `%`, `_`, `#`,
 * a second `:` or an unclosed `[` is a parse error ("client sent invalid
 * request"); a host `ngx_http_validate_host` refuses (empty, `..`) is
 * "client sent invalid host in request line", once the whole line is read.
 */
function readAuthority(
  { url, authority }: { url: string; authority: string },
): typeof READ | typeof UNREADABLE | typeof BAD_HOST {
  const schemeEnd = url.indexOf("://");
  if (schemeEnd < 0 || !SCHEME.test(url.slice(0, schemeEnd))) {
    return UNREADABLE;
  }
  const host = authority.startsWith("[")
    ? LITERAL.exec(authority)?.[0]
    : HOST_CHARS.exec(authority)![0];
  if (host === undefined || !PORT.test(authority.slice(host.length))) {
    return UNREADABLE;
  }
  return isValidHost(host) ? READ : BAD_HOST;
}
