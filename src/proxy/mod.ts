/**
 * Proxying: a location's proxy content handler (`proxyLocation`: nginx's
 * URI rule, `proxy_set_header`, `proxy_redirect`, the upstream groups of a
 * configuration), and the flags' `/api/` path (`forwardApi`); both forward
 * through the same walk over servers, the same WebSocket tunnel and the
 * same error lines.
 *
 * @module
 */

export {
  createForwarder,
  forwardApi,
  publicOrigin,
  tooLarge,
} from "./api_forward.ts";
export type { ApiForwarder, RequestEvent } from "./api_forward.ts";
export {
  type LocationProxyContext,
  type LocationRequest,
  type LocationResult,
  proxyLocation,
} from "./location_proxy.ts";
export { type RegistryOptions, UpstreamRegistry } from "./upstream_registry.ts";
export { upstreamUri, type UpstreamUriInput } from "./upstream_uri.ts";
export { type FieldPlan, fieldPlan, upstreamFields } from "./set_headers.ts";
export {
  locationResponseFields,
  rewriteRedirectValue,
} from "./response_fields.ts";
export { TempFiles } from "./temp_files.ts";
export { BodyDeadlines } from "./chunk_source.ts";
