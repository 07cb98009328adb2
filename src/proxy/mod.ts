/**
 * Proxying: a location's proxy content handler (`proxyLocation`): nginx's
 * URI rule (`upstream_uri.ts`), `proxy_set_header` (`set_headers.ts`), the
 * request body (`proxy.ts`), the walk over the group's servers, the reply
 * through `proxy_redirect` and `proxy_hide_header` (`location_reply.ts`),
 * or a WebSocket tunnel, and nginx's error lines (`outcome_log.ts`). The
 * FastCGI handler (`fastcgi/`) forwards through the same `proxyRequest`
 * and writes the same lines, with its own transport and relay.
 *
 * @module
 */

export type { RequestEvent } from "./outcome_log.ts";
export {
  type AccelRedirect,
  accelRedirect,
  accelRedirectOf,
  type AccelTarget,
  accelTarget,
} from "./accel_redirect.ts";
export { proxyLocation } from "./location_proxy.ts";
export {
  type LocationProxyContext,
  relayedUpstream,
  tunnelClosed,
} from "./location_forward.ts";
export {
  keptUpstream,
  type LocationRequest,
  PassForward,
} from "./pass_forward.ts";
export { type RegistryOptions, UpstreamRegistry } from "./upstream_registry.ts";
export {
  rawUpstreamUri,
  type RawUriInput,
  upstreamUri,
  type UpstreamUriInput,
} from "./upstream_uri.ts";
export { type FieldPlan, fieldPlan, upstreamFields } from "./set_headers.ts";
export {
  locationResponseFields,
  rewriteRedirectValue,
} from "./response_fields.ts";
export { TempFiles } from "./temp_files.ts";
export type { BodyTimeout, RequestBuffering } from "./proxy_options.ts";
export { BodyDeadlines } from "./chunk_source.ts";
export { fitsInMemory } from "./request_buffer.ts";
export { proxyRequest } from "./proxy.ts";
export {
  type BodyKeeper,
  keepsBody,
  type KeptBody,
  releaseKeptBody,
} from "./kept_body.ts";
export type {
  AttemptWarning,
  LocationCall,
  ProxyOptions,
  ProxyResult,
} from "./proxy_options.ts";
export {
  type FailureCounter,
  logAttempt,
  logOutcome,
  logWarning,
} from "./outcome_log.ts";
