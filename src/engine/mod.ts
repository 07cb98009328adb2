/**
 * The configuration engine: nginx's http configuration model (servers,
 * locations, variables, the rewrite module, inheritance), compiled once from
 * a parsed nginx.conf, and the request phases that run it.
 *
 * @module
 */

export type * from "./model.ts";
export type * from "./listen_model.ts";
export type * from "./proxy_model.ts";
export type * from "./response_model.ts";
export type * from "./upstream_model.ts";
export { SERVER_DEFAULTS } from "./upstream_model.ts";
export type * from "./http_model.ts";
export {
  compileValue,
  type ComplexValue,
  constantValue,
  ValueError,
  type VariableScope,
} from "./complex_value.ts";
export { evaluateMap, type RequestVars, Variables } from "./variables.ts";
export {
  findLocation,
  indexLocations,
  type LocationFound,
} from "./locations.ts";
export {
  findServer,
  groupByListen,
  type ListenGroup,
  listenKey,
  parseServerName,
} from "./servers.ts";
export {
  type RewriteOutcome,
  type RewriteRun,
  runRewrite,
  setNamed,
} from "./rewrite.ts";
export type { RewriteOp, RewriteProgram } from "./rewrite_program.ts";
export {
  compileCondition,
  compileReturn,
  compileRewrite,
} from "./rewrite_compile.ts";
export { sendable, SENDABLE_STATUSES } from "./sendable_status.ts";
export { compileRegex, runsLinear } from "./regex.ts";
export type { Referers } from "./referers.ts";
export {
  addHostnameKey,
  hostnameTable,
  type HostnameWildcards,
  sortWildcards,
} from "./hostname_keys.ts";
export {
  type AccessStep,
  type Content,
  type DeclaredBody,
  hasAccessPhase,
  internalRedirect,
  mapUri,
  type PhaseIo,
  type PhaseOutcome,
  type PhaseState,
  runPhases,
  uriChangesLeft,
} from "./phases.ts";
export { unescapeUri } from "./uri_escape.ts";
export {
  type FastcgiConf,
  type FastcgiParam,
  type FastcgiSplit,
  fastcgiSplit,
} from "./fastcgi_conf.ts";
export { machineHostname } from "./built_in_variables.ts";
