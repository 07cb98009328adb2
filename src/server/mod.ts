/**
 * Serving: the listeners and their recovery, the one policy that decides
 * recover-or-exit for every fault, requests in flight at shutdown, and
 * the run from start to exit.
 *
 * @module
 */

export { describeError } from "./fault_policy.ts";
export type { FaultLimits } from "./fault_policy.ts";
export type { InFlightRequests } from "./in_flight.ts";
export { runGateway } from "./lifecycle.ts";
