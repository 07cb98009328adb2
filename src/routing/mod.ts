/**
 * The client's request as the gateway parses it after Deno: the checks
 * nginx makes before routing (Host, Content-Length, method, HTTP/2), the
 * target decoded and normalised into `$uri` and `$args`.
 *
 * @module
 */

export {
  decodeTarget,
  escapedSegments,
  needsNormalising,
  normaliseTarget,
  requestTarget,
  segmentText,
} from "./request_target.ts";
export { decodeToBytes, escapeBytes } from "./path_decode.ts";
export type {
  DecodedTarget,
  InvalidTarget,
  NormalisedTarget,
} from "./request_target.ts";
export { checkRequestHead, READING_HEADERS } from "./request_checks.ts";
export {
  expectsContinue,
  hasUnforwardableBody,
} from "./request_body_checks.ts";
export {
  checkRequestLine,
  READING_REQUEST_LINE,
} from "./request_line_checks.ts";
export { readFields } from "./read_fields.ts";
export {
  absoluteAuthority,
  looksLikeHttp2,
  originTarget,
  requestLine,
  spokeHttp1,
  urlAuthority,
  urlHost,
} from "./request_line.ts";
export type { CheckEvent, RejectStatus } from "./request_checks.ts";
export type { LineVerdict } from "./request_line_checks.ts";
export type { FieldsRead } from "./read_fields.ts";
export type { ContentLength } from "./content_length.ts";
export { hostNameOf, isValidHost } from "./host.ts";
export { DEFAULT_HEADER_BUFFERS } from "./header_buffers.ts";
export type { HeaderBuffers } from "./header_buffers.ts";
export { listElements, listHas } from "./field_lists.ts";
