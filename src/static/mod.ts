/**
 * Static files: nginx's static module under a location's settings
 * (`serveFile`, `fileKind`, the types of `types {}`), contained in the
 * location's folder, cached, with ranges and validators; the built-in page
 * and the files `error_page` names (`errorPageResponse`).
 *
 * @module
 */

export {
  type AutoindexConf,
  type AutoindexEntry,
  autoindexHtml,
} from "./autoindex.ts";
export {
  type AutoindexFailure,
  type AutoindexRequest,
  autoindexResponse,
} from "./autoindex_listing.ts";
export { StaticCache } from "./cache.ts";
export type { ContainmentHook, ContainmentStep } from "./containment.ts";
export { MAX_SETTLE_WAIT_MS } from "./settled_proof.ts";
export { renderDefaultPage } from "./default_page.ts";
export { errorPageResponse } from "./error_page.ts";
export {
  directoryIndexForbidden,
  type FileKind,
  fileKind,
  indexFailure,
} from "./file_kind.ts";
export type {
  AskedFields,
  StaticFailure,
  StaticResult,
} from "./static_results.ts";
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
export { kernelName } from "./os_names.ts";
export { serveFile } from "./serve_file.ts";
export type { ServeFileConf, ServeFileOptions } from "./serve_file_options.ts";
export { CONTENT_TYPES, contentTypeFor } from "./media_types.ts";
