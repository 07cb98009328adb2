/**
 * The command line: flags to {@linkcode SettingsInput}, and the usage text.
 * Pure: no `Deno.args`, no exit (those live in `main.ts`).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DEFAULT_SETTINGS, type SettingsInput } from "./config.ts";
import { LOG_LEVELS } from "./error_log.ts";

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
  /** `--print-config`: print the effective settings as the JSON config file. */
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
  "client-max-body-size": { type: "string" },
  "upstream-keepalive": { type: "string" },
  "spa-fallback": { type: "string" },
  "status-path": { type: "string" },
  "log-not-found": { type: "string" },
  "cache-html": { type: "string" },
  "cache-fingerprinted": { type: "string" },
  "cache-other": { type: "string" },
  "api-prefix": { type: "string" },
  "keep-api-prefix": { type: "boolean" },
  config: { type: "string", short: "c" },
  "nginx-conf": { type: "string" },
  "print-config": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  check: { type: "boolean", short: "t" },
  version: { type: "boolean", short: "V" },
} as const;

function quoted(message: string): string {
  return message.match(/'([^']+)'/)?.[1] ?? "";
}

function wholeNumber(text: string, name: string): number {
  if (!/^\d+$/.test(text)) {
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
 * @throws {TypeError} On an unknown flag, a missing value or a stray
 * argument, with a one-line message naming it.
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
      throw new TypeError(`Unknown option "${quoted(message)}"`);
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      const flag = message.match(/--[a-z-]+/)?.[0] ?? quoted(message);
      throw new TypeError(`Option "${flag}" needs a value`);
    }
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
      throw new TypeError(`Unexpected argument "${quoted(message)}"`);
    }
    throw new TypeError(message);
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
  if (values["client-max-body-size"] !== undefined) {
    settings.clientMaxBodySize = values["client-max-body-size"];
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
  if (values["cache-html"] !== undefined) {
    settings.cacheHtml = values["cache-html"];
  }
  if (values["cache-fingerprinted"] !== undefined) {
    settings.cacheFingerprinted = values["cache-fingerprinted"];
  }
  if (values["cache-other"] !== undefined) {
    settings.cacheOther = values["cache-other"];
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

/**
 * The usage text printed by `--help` and after a bad flag.
 *
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { formatUsage } from "./cli.ts";
 * import { match } from "node:assert/strict";
 *
 * match(formatUsage(), /--upstream/);
 * ```
 */
export function formatUsage(): string {
  const d = DEFAULT_SETTINGS;
  return `station-gateway: serves a client app and forwards /api/ to an upstream

USAGE:
  station-gateway [OPTIONS]
  station-gateway task install|remove|status [...]   (Windows scheduled task;
                                                      see: task --help)

OPTIONS:
  --listen [HOST:]PORT     Where to listen (default: ${d.listen}, on 127.0.0.1 and ::1;
                           give *:PORT or 0.0.0.0:PORT to accept other machines)
  --upstream URL [PARAMS]  Where /api/ goes: http://host[:port] (default:
                           ${d.upstream}; port 8080 when omitted). Give it
                           again for failover, as nginx's server lines:
                           --upstream "http://10.0.0.5" --upstream "http://127.0.0.1 backup"
                           PARAMS: backup, max_fails=N (1), fail_timeout=T (10s)
  --upstream-group NAME    Name in "no live upstreams" lines (default: ${d.upstreamGroup})
  --root DIR               The client-app folder (default: ${d.root})
  --status-path PATH|off   JSON counters at PATH, for loopback clients only,
                           like nginx stub_status (default: off)
  --spa-fallback on|off    App routes with no file get index.html (default: on)
  --log-not-found on|off   Log missing files as nginx does (default: on)
  --cache-html VALUE       Cache-Control for HTML (default: ${d.cacheHtml})
  --cache-fingerprinted V  Cache-Control for app.3f9a2c1b.js-style files
                           (default: ${d.cacheFingerprinted})
  --cache-other VALUE      Cache-Control for other files (default: ${d.cacheOther})
  --server-name NAME       The "server:" field of error-log lines (default: ${d.serverName})
  --error-log FILE         The error log (default: ${d.errorLog})
  --access-log FILE|off    The access log, nginx "combined" (default: ${d.accessLog})
  --error-log-level LEVEL  ${
    LOG_LEVELS.join(", ")
  } (default: ${d.errorLogLevel})
  --add-forwarded-headers  Send X-Forwarded-For, -Proto and -Host upstream
  --api-prefix /SEGMENT/   The location forwarded upstream (default: ${d.apiPrefix})
  --keep-api-prefix        Forward the prefix too, as nginx's proxy_pass without
                           a URI part; by default it is replaced by /
  --log-max-size SIZE      Rotate a log before it exceeds SIZE, e.g. 16m; 0 = never
                           (default: ${d.logMaxSize})
  --log-keep N             Rotated files kept per log (default: ${d.logKeep})
  --proxy-connect-timeout T  Connecting to the upstream (default: ${d.proxyConnectTimeout})
  --proxy-send-timeout T   Between two writes to the upstream (default: ${d.proxySendTimeout})
  --proxy-read-timeout T   Between two reads from the upstream (default: ${d.proxyReadTimeout})
  --client-max-body-size SIZE  Largest request body, 0 = no limit (default: ${d.clientMaxBodySize})
  --upstream-keepalive N   Idle upstream connections kept; 0 = a new connection
                           per request (default: ${d.upstreamKeepalive})
  -c, --config FILE        JSON file with the same settings in camelCase
                           (e.g. {"upstream": "http://10.0.0.5"}); flags override it
  --nginx-conf FILE        Run from a station's nginx.conf, e.g.
                           C:\\nginx\\conf\\nginx.conf: paths in it start at the folder
                           above conf, as for nginx; --config and flags override it
  --print-config           Print the effective settings as a JSON config file
  -t, --check              Check the configuration, log files and port, then
                           exit 0 or 1 with the reason (like nginx -t)
  -h, --help               Print this help
  -V, --version            Print the version

Relative paths start from the executable's folder (the project folder under
"deno run"), never from the working directory.
`;
}
