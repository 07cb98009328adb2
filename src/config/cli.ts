/**
 * The command line: flags to {@linkcode SettingsInput}, and the usage text.
 * Pure: no `Deno.args`, no exit (those live in `main.ts`).
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { SettingsInput } from "./settings_input.ts";
import { closestWord } from "./did_you_mean.ts";

/**
 * A misused command line (an unknown option, a missing value, a stray
 * word), as opposed to a bad value: exit code 2 rather than 1, as for
 * `nginx -x` and most command-line tools.
 */
export class UsageError extends Error {
  /**
   * Creates the error.
   *
   * @param message One line naming the argument.
   */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** What the command line asks for. */
export interface CliOptions {
  /** `--help`. */
  help: boolean;
  /** `--check`: validate the configuration and paths, then exit. */
  check: boolean;
  /** `--version`. */
  version: boolean;
  /** `--config FILE`, if given. */
  configPath?: string;
  /** `--nginx-conf FILE`, if given: a station's nginx.conf to run from. */
  nginxConfPath?: string;
  /** `--print-config`: print the configuration as nginx.conf text (`nginx -T`). */
  printConfig: boolean;
  /** Settings given as flags; they override the config file. */
  settings: SettingsInput;
}

const OPTIONS = {
  listen: { type: "string" },
  upstream: { type: "string", multiple: true },
  "upstream-group": { type: "string" },
  root: { type: "string" },
  "server-name": { type: "string" },
  "error-log": { type: "string" },
  "access-log": { type: "string" },
  "error-log-level": { type: "string" },
  "add-forwarded-headers": { type: "boolean" },
  "log-max-size": { type: "string" },
  "log-keep": { type: "string" },
  "proxy-connect-timeout": { type: "string" },
  "proxy-send-timeout": { type: "string" },
  "proxy-read-timeout": { type: "string" },
  "proxy-buffer-size": { type: "string" },
  "client-max-body-size": { type: "string" },
  "client-body-timeout": { type: "string" },
  "client-body-buffer-size": { type: "string" },
  "client-body-temp-path": { type: "string" },
  "proxy-request-buffering": { type: "string" },
  "large-client-header-buffers": { type: "string" },
  "upstream-keepalive": { type: "string" },
  "spa-fallback": { type: "string" },
  "status-path": { type: "string" },
  "log-not-found": { type: "string" },
  "underscores-in-headers": { type: "string" },
  "cache-html": { type: "string" },
  "cache-fingerprinted": { type: "string" },
  "cache-other": { type: "string" },
  "error-page": { type: "string", multiple: true },
  "api-prefix": { type: "string" },
  "keep-api-prefix": { type: "boolean" },
  config: { type: "string", short: "c" },
  "nginx-conf": { type: "string" },
  "print-config": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  check: { type: "boolean", short: "t" },
  version: { type: "boolean", short: "V" },
} as const;

const OPTION_NAMES = Object.keys(OPTIONS).map((name) => `--${name}`);

/** Options other servers and tools take for the listening port. */
const HABITS: Readonly<Record<string, string>> = {
  port: "--listen",
  p: "--listen",
  bind: "--listen",
  host: "--listen",
};

/**
 * The message for an unknown option, with the near miss when there is one.
 *
 * @param option The option as given, e.g. `--lisen`.
 * @param known The options that exist.
 * @returns The one-line message.
 *
 * @example Usage
 * ```ts
 * import { unknownOption } from "./cli.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(unknownOption("--lisen", ["--listen"]), 'unknown option "--lisen"; did you mean "--listen"?');
 * ```
 */
export function unknownOption(
  option: string,
  known: readonly string[] = OPTION_NAMES,
): string {
  const name = option.split("=", 1)[0]!;
  // Other servers' names for a setting: no spelling is near them.
  const habit = HABITS[name.replace(/^-+/, "").toLowerCase()];
  if (habit !== undefined && known.includes(habit)) {
    return `unknown option "${option}"; the port is set with "${habit}", e.g. ${habit} 9000 or ${habit} 0.0.0.0:9000`;
  }
  const near = closestWord(name, known);
  return `unknown option "${option}"${
    near === undefined ? "" : `; did you mean "${near}"?`
  }`;
}

function quoted(message: string): string {
  return message.match(/'([^']+)'/)?.[1] ?? "";
}

function wholeNumber(text: string, name: string): number {
  // Past 2^53 a number is no longer exact: refused, never rounded.
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new TypeError(
      `Cannot parse ${name} "${text}": expected a whole number`,
    );
  }
  return Number(text);
}

/**
 * Parses the command line.
 *
 * @param args The arguments, without the program.
 * @returns What they ask for.
 * @throws {UsageError} On an unknown flag, a missing value or a stray
 * argument, with a one-line message naming it.
 * @throws {TypeError} On a malformed number.
 *
 * @example Usage
 * ```ts
 * import { parseCliArgs } from "./cli.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const cli = parseCliArgs(["--listen", "127.0.0.1:9000", "--access-log", "off"]);
 * strictEqual(cli.settings.listen, "127.0.0.1:9000");
 * strictEqual(cli.settings.accessLog, "off");
 * ```
 */
export function parseCliArgs(args: string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : String(error);
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      throw new UsageError(unknownOption(quoted(message)));
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      const flag = message.match(/--[a-z-]+/)?.[0] ?? quoted(message);
      throw new UsageError(
        /does not take/.test(message)
          ? `option "${flag}" takes no value`
          : `option "${flag}" needs a value`,
      );
    }
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
      throw new UsageError(`unexpected argument "${quoted(message)}"`);
    }
    throw new UsageError(message.split("\n", 1)[0]!);
  }
  const settings: SettingsInput = {};
  if (values.listen !== undefined) settings.listen = values.listen;
  if (values.upstream !== undefined) {
    settings.upstream = values.upstream.length === 1
      ? values.upstream[0]!
      : values.upstream;
  }
  if (values["upstream-group"] !== undefined) {
    settings.upstreamGroup = values["upstream-group"];
  }
  if (values.root !== undefined) settings.root = values.root;
  if (values["server-name"] !== undefined) {
    settings.serverName = values["server-name"];
  }
  if (values["error-log"] !== undefined) {
    settings.errorLog = values["error-log"];
  }
  if (values["access-log"] !== undefined) {
    settings.accessLog = values["access-log"];
  }
  if (values["error-log-level"] !== undefined) {
    settings.errorLogLevel = values["error-log-level"];
  }
  if (values["add-forwarded-headers"] !== undefined) {
    settings.addForwardedHeaders = values["add-forwarded-headers"];
  }
  if (values["log-max-size"] !== undefined) {
    settings.logMaxSize = values["log-max-size"];
  }
  if (values["log-keep"] !== undefined) {
    settings.logKeep = wholeNumber(values["log-keep"], "log-keep");
  }
  if (values["proxy-connect-timeout"] !== undefined) {
    settings.proxyConnectTimeout = values["proxy-connect-timeout"];
  }
  if (values["proxy-send-timeout"] !== undefined) {
    settings.proxySendTimeout = values["proxy-send-timeout"];
  }
  if (values["proxy-read-timeout"] !== undefined) {
    settings.proxyReadTimeout = values["proxy-read-timeout"];
  }
  if (values["proxy-buffer-size"] !== undefined) {
    settings.proxyBufferSize = values["proxy-buffer-size"];
  }
  if (values["client-max-body-size"] !== undefined) {
    settings.clientMaxBodySize = values["client-max-body-size"];
  }
  if (values["client-body-timeout"] !== undefined) {
    settings.clientBodyTimeout = values["client-body-timeout"];
  }
  if (values["client-body-buffer-size"] !== undefined) {
    settings.clientBodyBufferSize = values["client-body-buffer-size"];
  }
  if (values["client-body-temp-path"] !== undefined) {
    settings.clientBodyTempPath = values["client-body-temp-path"];
  }
  if (values["proxy-request-buffering"] !== undefined) {
    settings.proxyRequestBuffering = values["proxy-request-buffering"];
  }
  if (values["large-client-header-buffers"] !== undefined) {
    settings.largeClientHeaderBuffers = values["large-client-header-buffers"];
  }
  if (values["status-path"] !== undefined) {
    settings.statusPath = values["status-path"];
  }
  if (values["spa-fallback"] !== undefined) {
    settings.spaFallback = values["spa-fallback"];
  }
  if (values["log-not-found"] !== undefined) {
    settings.logNotFound = values["log-not-found"];
  }
  if (values["underscores-in-headers"] !== undefined) {
    settings.underscoresInHeaders = values["underscores-in-headers"];
  }
  if (values["cache-html"] !== undefined) {
    settings.cacheHtml = values["cache-html"];
  }
  if (values["cache-fingerprinted"] !== undefined) {
    settings.cacheFingerprinted = values["cache-fingerprinted"];
  }
  if (values["cache-other"] !== undefined) {
    settings.cacheOther = values["cache-other"];
  }
  if (values["error-page"] !== undefined) {
    settings.errorPage = values["error-page"];
  }
  if (values["api-prefix"] !== undefined) {
    settings.apiPrefix = values["api-prefix"];
  }
  if (values["keep-api-prefix"] !== undefined) {
    settings.keepApiPrefix = values["keep-api-prefix"];
  }
  if (values["upstream-keepalive"] !== undefined) {
    settings.upstreamKeepalive = wholeNumber(
      values["upstream-keepalive"],
      "upstream-keepalive",
    );
  }
  return {
    help: values.help ?? false,
    check: values.check ?? false,
    version: values.version ?? false,
    printConfig: values["print-config"] ?? false,
    ...(values.config === undefined ? {} : { configPath: values.config }),
    ...(values["nginx-conf"] === undefined
      ? {}
      : { nginxConfPath: values["nginx-conf"] }),
    settings,
  };
}
