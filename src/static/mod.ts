/**
 * The client app: static files from the root, contained in it, cached,
 * with ranges and content types, the built-in page and nginx's error pages.
 *
 * @module
 */

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
export { serveStatic } from "./handler.ts";
export { CONTENT_TYPES, contentTypeFor } from "./media_types.ts";
export {
  isStreamedResponse,
  meteredBody,
  streamedResponse,
} from "./response_body.ts";
export type { MeteredBody } from "./response_body.ts";
