/**
 * Static files: the client app of the flags and JSON config
 * (`serveStatic`), and nginx's static module under a location's settings
 * (`serveFile`, `fileKind`, the types of `types {}`); both contained in
 * their folder, cached, with ranges and validators, the built-in page and
 * nginx's error pages.
 *
 * @module
 */

export {
  type AutoindexConf,
  type AutoindexEntry,
  type AutoindexFailure,
  autoindexHtml,
  autoindexResponse,
} from "./autoindex.ts";
export { StaticCache } from "./cache.ts";
export { DEFAULT_CACHE_POLICY } from "./content_negotiation.ts";
export type { CachePolicy } from "./content_negotiation.ts";
export { renderDefaultPage } from "./default_page.ts";
export { errorPageResponse } from "./error_page.ts";
export {
  DEFAULT_ERROR_PAGE,
  errorResponse,
  isBuiltInError,
  parseErrorPages,
} from "./error_pages.ts";
export type { ErrorPages } from "./error_pages.ts";
export {
  directoryIndexForbidden,
  type FileKind,
  fileKind,
  indexFailure,
} from "./file_kind.ts";
export { serveStatic } from "./handler.ts";
export type { StaticFailure, StaticResult } from "./handler.ts";
export {
  type ContentTypeConf,
  contentTypeOf,
  NGINX_CHARSET_TYPES,
  NGINX_DEFAULT_TYPE,
  NGINX_DEFAULT_TYPES,
  type TypesDirective,
  typesFromDirectives,
  type TypesTable,
  uriExtension,
} from "./nginx_types.ts";
export {
  serveFile,
  type ServeFileConf,
  type ServeFileOptions,
} from "./serve_file.ts";
export { CONTENT_TYPES, contentTypeFor } from "./media_types.ts";
export {
  isStreamedResponse,
  meteredBody,
  streamedResponse,
} from "./response_body.ts";
export type { MeteredBody } from "./response_body.ts";
