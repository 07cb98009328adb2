/**
 * Settings: the command line, the JSON config file and their values, the
 * listen and upstream addresses, resolved into one {@linkcode GatewayConfig};
 * the usage text. Pure: reading files and starting is `server/`'s.
 *
 * @module
 */

export { listenHosts, parseUpstreamServer } from "./addresses.ts";
export {
  MAX_CLIENT_BODY_BUFFER_SIZE,
  MAX_CONSISTENT_HASH_WEIGHT,
  MAX_HEADER_BUFFER_SIZE,
  MAX_HEADER_BUFFERS,
  MAX_PROXY_BUFFER_SIZE,
  MAX_UPSTREAM_KEEPALIVE,
  sizeText,
} from "./bounds.ts";
export { parseCliArgs, UsageError } from "./cli.ts";
export type { CliOptions } from "./cli.ts";
export { resolveConfig } from "./config.ts";
export { DEFAULT_CACHE_POLICY } from "./gateway_config.ts";
export type { CachePolicy, GatewayConfig } from "./gateway_config.ts";
export { DEFAULT_SETTINGS } from "./settings_input.ts";
export type { SettingsInput } from "./settings_input.ts";
export { parseConfigFile } from "./config_file.ts";
export { MAX_TIMER_MS, pathProblem } from "./config_values.ts";
export type { FileInput } from "./config_file.ts";
export { formatUsage } from "./usage.ts";
