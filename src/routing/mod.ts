/**
 * The client's request as the gateway parses it after Deno: the checks
 * nginx makes before routing (Host, Content-Length, method, HTTP/2), the
 * path decoded and normalised, and the route: upstream or static file.
 *
 * @module
 */

export { decodeTarget, requestTarget, routeRequest } from "./path_rewrite.ts";
export { escapeBytes } from "./path_decode.ts";
export type { DecodedTarget } from "./path_rewrite.ts";
export type { Route } from "./path_rewrite.ts";
export {
  absoluteAuthority,
  checkRequestHead,
  hasUnforwardableBody,
  looksLikeHttp2,
  READING_HEADERS,
  READING_REQUEST_LINE,
  requestLine,
} from "./request_checks.ts";
export type { CheckEvent, RejectStatus } from "./request_checks.ts";
