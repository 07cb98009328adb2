/**
 * Starting and serving: the command line and configuration read into
 * settings with every failure as one `[emerg]` line (`startup.ts`), `--check`,
 * the listeners and their recovery, the one policy that decides
 * recover-or-exit for every fault, requests in flight at shutdown, and the
 * run from start to exit.
 *
 * @module
 */

export type { FaultLimits } from "./fault_policy.ts";
export type { InFlightRequests } from "./in_flight.ts";
export { runGateway, serveErrorHandler, startServing } from "./lifecycle.ts";
export type { ServeOptions, Serving } from "./lifecycle.ts";
export { startup } from "./startup.ts";
