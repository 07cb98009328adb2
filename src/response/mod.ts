/**
 * Responses as every handler answers them: nginx's built-in error pages
 * (`errorResponse`), bodies streamed and metered for the access line
 * (`streamedResponse`, `meteredBody`), the origin of absolute redirects
 * (`publicOrigin`), and what nginx's response filters do to a response's
 * head, for static and proxied responses alike: `expires` and `add_header`
 * (`ngx_http_headers_filter_module`), `charset`
 * (`ngx_http_charset_filter_module`) and whether a request takes gzip
 * (`ngx_http_gzip_ok`), and the gzip filter
 * (`ngx_http_gzip_filter_module`). nginx runs them in this order on every response a
 * location sends; `serveFile` runs them for static files, a proxied
 * response takes them as below. On a TLS connection a response is written
 * in one piece (`writeInOnePiece`): Deno leaves Nagle's algorithm on there.
 *
 * @example A proxied response
 * ```ts
 * import { charsetFilter, filterHeaders, hasHeadersFilter } from "./mod.ts";
 * import { constantValue, type RequestVars } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = {
 *   addHeaders: [{ name: "X-Frame-Options", value: constantValue("SAMEORIGIN"), always: false }],
 *   expires: { kind: "off" } as const,
 *   charset: "utf-8",
 *   charsetTypes: new Set(["text/html"]),
 * };
 * const upstream = new Headers({ "content-type": "text/html", "content-encoding": "gzip" });
 * if (hasHeadersFilter(conf)) {
 *   filterHeaders(upstream, { status: 200, conf, vars: {} as RequestVars });
 * }
 * const type = charsetFilter(upstream.get("content-type"), 200, conf);
 * strictEqual(type, "text/html; charset=utf-8"); // encoded or not: nothing is recoded
 * strictEqual(upstream.get("x-frame-options"), "SAMEORIGIN");
 * ```
 *
 * @module
 */

export { type CharsetConf, charsetFilter } from "./charset_filter.ts";
export { type ExpiresFields, expiresFields, parseExpires } from "./expires.ts";
export {
  gzipAccepted,
  type GzipRequest,
  NGINX_GZIP_OK,
} from "./gzip_accept.ts";
export {
  gzipFilter,
  type GzipFilterConf,
  type GzipFilterInput,
  gzipFromLength,
  gzipTypeMatches,
  gzipWholeBody,
  markGzipVary,
  rememberBody,
} from "./gzip_filter.ts";
export { httpTimeMs } from "./http_time.ts";
export {
  type AnswerValidators,
  type ConditionalFields,
  isConditional,
  NO_VALIDATORS,
  preconditionStatus,
} from "./preconditions.ts";
export {
  filterHeaders,
  hasHeadersFilter,
  HEADERS_FILTER_STATUSES,
  type HeadersFilterConf,
  type HeadersFilterInput,
} from "./headers_filter.ts";
export { escapeControls, redirectLocation } from "./field_value.ts";
export { FieldList, type HeaderFields } from "./field_list.ts";
export { isNullBodyStatus, makeResponse } from "./make_response.ts";
export { publicOrigin } from "./origin.ts";
export {
  errorPageBody,
  errorResponse,
  type ErrorResponseOptions,
  errorStatus,
  HEADER_TOO_LARGE,
  isBuiltInError,
  STATUS_TEXT,
} from "./error_response.ts";
export {
  closesUnanswered,
  isUnanswered,
  isUnread,
  markUnread,
  unansweredResponse,
  unreadResponse,
} from "./unanswered.ts";
export {
  isStreamedResponse,
  type MeteredBody,
  meteredBody,
  streamedResponse,
} from "./response_body.ts";
export {
  framedInOnePiece,
  ONE_WRITE_FIELD,
  writeInOnePiece,
} from "./tls_one_write.ts";
