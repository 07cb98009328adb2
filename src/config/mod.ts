/**
 * Settings: the command line, the JSON config file, their values and
 * addresses, resolved once into one {@linkcode GatewayConfig}; `--check`.
 *
 * @module
 */

export { listenHosts } from "./addresses.ts";
export type { UpstreamServerSpec } from "./addresses.ts";
export { parseCliArgs, UsageError } from "./cli.ts";
export { resolveConfig } from "./config.ts";
export type { GatewayConfig, SettingsInput } from "./config.ts";
export { startup } from "./startup.ts";
