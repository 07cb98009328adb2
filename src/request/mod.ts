/**
 * One request's path through the configuration engine, each stage in a
 * file of its own and read in this order: the server its name chooses
 * (`server_choice.ts`), its variables (`request_vars.ts`), the phases that
 * choose its location and content (`request_flow.ts`) with the preaccess
 * and access phases (`access_gate.ts`), the answer (`content_answer.ts`) —
 * the flow's own (`return`, a redirect, an error), static
 * (`static_handler.ts`) or proxy (`proxy_handler.ts`) — with `error_page`
 * for an error (`error_page.ts`), the filters on the answer
 * (`ssi_includes.ts`, then gzip), and the access line of the location that
 * answered (`access_accounting.ts`). `EngineRoute` (`engine_route.ts`) ties
 * them together; the gateway's handler (`request_context.ts`) reads a
 * request into an `EngineRequest` and hands it over.
 *
 * @module
 */

export type {
  EngineRequest,
  EngineRouteDeps,
  LogScope,
} from "./engine_request.ts";
export { EngineRoute } from "./engine_route.ts";
export {
  type InFlightRegistry,
  PendingAccessLine,
} from "./access_accounting.ts";
export { listenPorts } from "./server_choice.ts";
export type { RefusalStage } from "./request_vars.ts";
