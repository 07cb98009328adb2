/**
 * What nginx checks of the request line before it reads the header fields
 * (`ngx_http_parse_request_line`, `ngx_http_alloc_large_header_buffer`):
 * the method token, and the line's length against
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
    /** 400 for the method, 414 for the length. */
    status: 400 | 414;
    /** The `[info]` line, about the request line. */
    event: CheckEvent;
    /** The request as nginx logs it then (a 414 shows what it held). */
    request: string;
  };

const LINE_OK: LineVerdict = Object.freeze({ kind: "ok" });

/**
 * Checks the request line as nginx reads it: the method token, then its
 * length against `large_client_header_buffers`.
 *
 * @param method The method as sent (`Deno.serve` keeps its case).
 * @param line The request line for the logs ({@linkcode requestLine}).
 * @param limits `large_client_header_buffers`.
 * @returns The verdict.
 *
 * @example Usage
 * ```ts
 * import { checkRequestLine } from "./request_line_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(checkRequestLine("GET", "GET / HTTP/1.1").kind, "ok");
 * strictEqual(checkRequestLine("get", "get / HTTP/1.1").kind, "reject");
 * ```
 */
export function checkRequestLine(
  method: string,
  line: string,
  limits: HeaderBuffers = DEFAULT_HEADER_BUFFERS,
): LineVerdict {
  // The common methods are tokens: no regex run for them.
  const common = method === "GET" || method === "HEAD" || method === "POST";
  if (!common && !METHOD_TOKEN.test(method)) {
    return {
      kind: "reject",
      status: 400,
      event: {
        level: "info",
        message: "client sent invalid method",
        action: READING_REQUEST_LINE,
      },
      request: line,
    };
  }
  const held = tooLongRequestLine(line, limits);
  if (held === null) return LINE_OK;
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
