/**
 * What nginx's response filters do to a response's head, for static and
 * proxied responses alike: `expires` and `add_header`
 * (`ngx_http_headers_filter_module`), `charset` (`ngx_http_charset_filter_module`)
 * and whether a request takes gzip
 * (`ngx_http_gzip_ok`).
 *
 * @module
 */

export { type CharsetConf, charsetFilter } from "./charset_filter.ts";
export { type ExpiresFields, expiresFields, parseExpires } from "./expires.ts";
export { gzipAccepted, type GzipRequest } from "./gzip_accept.ts";
export {
  filterHeaders,
  hasHeadersFilter,
  HEADERS_FILTER_STATUSES,
  type HeadersFilterConf,
  type HeadersFilterInput,
} from "./headers_filter.ts";
