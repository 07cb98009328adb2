/**
 * The `/api/` path: one request forwarded upstream or tunnelled as a
 * WebSocket, the headers rewritten both ways, failures turned into nginx's
 * error pages.
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
