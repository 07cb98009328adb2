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
  checkRequestHead,
  checkRequestLine,
  expectsContinue,
  hasUnforwardableBody,
  READING_HEADERS,
  READING_REQUEST_LINE,
} from "./request_checks.ts";
export {
  absoluteAuthority,
  looksLikeHttp2,
  requestLine,
  urlAuthority,
  urlHost,
} from "./request_line.ts";
export type {
  CheckEvent,
  LineVerdict,
  RejectStatus,
} from "./request_checks.ts";
export { isValidHost } from "./host.ts";
export { DEFAULT_HEADER_BUFFERS } from "./header_buffers.ts";
export type { HeaderBuffers } from "./header_buffers.ts";
