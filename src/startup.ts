/**
 * Everything before the gateway serves: the command line, the config file,
 * `--check`, and opening the logs. A failure here is one `[emerg]` line on
 * stderr and the same line in the error log, as nginx writes
 * `[emerg] unknown directive "x" in /etc/nginx/nginx.conf:3`: the gateway
 * runs from a scheduled task with no console, and the log is what the
 * administrator reads. The log is the configured one when it can be told
 * from what was given, else `logs/error.log` beside the executable.
 *
 * Exit codes: 2 for a misused command line, 1 for a bad configuration or a
 * failed start; errors on stderr.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { checkConfig, type CheckOptions } from "./check.ts";
import { formatUsage, parseCliArgs, UsageError } from "./cli.ts";
import type { CliOptions } from "./cli.ts";
import {
  DEFAULT_SETTINGS,
  type GatewayConfig,
  resolveConfig,
  type SettingsInput,
} from "./config.ts";
import { parseConfigFile } from "./config_file.ts";
import type { OsErrorText } from "./error_log.ts";
import { LogFile } from "./log_file.ts";
import { createLogger, type Logger } from "./logger.ts";
import { currentOsFamily, osErrorOf, type OsFamily } from "./os_errors.ts";

/** What the start needs from the process. */
export interface StartupContext {
  /** The gateway's version, for `--version`. */
  version: string;
  /** The folder relative paths start from. */
  baseDir: string;
  /** Writes to stdout; never throws. */
  out(text: string): void;
  /** Writes to stderr; never throws. */
  err(text: string): void;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
  /** Options for `--check`'s probes. */
  check?: CheckOptions;
}

/** The outcome: serve with these, or exit with this code. */
export type Startup =
  | { exitCode: number }
  | { config: GatewayConfig; logger: Logger };

/** A failure to start, as data until it is reported. */
interface Failure {
  message: string;
  osError?: OsErrorText;
  /** Print `see --help` after it (the command line or config is at fault). */
  hint: boolean;
  exitCode: 1 | 2;
}

const PREFIX = "station-gateway:";

function absolute(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The `--error-log` value among raw arguments that did not parse. */
function errorLogArg(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--error-log") return args[i + 1];
    if (arg.startsWith("--error-log=")) return arg.slice(12);
  }
  return undefined;
}

/** The `errorLog` a config file names, read leniently (it may be invalid). */
function errorLogInFile(path: string): string | undefined {
  try {
    const data = JSON.parse(Deno.readTextFileSync(path));
    return typeof data?.errorLog === "string" ? data.errorLog : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes one `[emerg]` line to the first error log that opens: the one
 * given, else the default. Never throws; when no log opens, says so on
 * stderr as nginx does (`[alert] could not open error log file: …`).
 */
function logEmerg(
  failure: Failure,
  logPath: string | undefined,
  context: StartupContext,
): void {
  const fallback = absolute(context.baseDir, DEFAULT_SETTINGS.errorLog);
  const paths = [...new Set([logPath ?? fallback, fallback])];
  let firstError: unknown;
  for (const path of paths) {
    let file: LogFile;
    try {
      file = LogFile.open(path);
    } catch (error) {
      firstError ??= [path, error];
      continue;
    }
    const logger = createLogger({ errorLog: file, accessLog: null });
    logger.error({
      level: "emerg",
      message: failure.message,
      ...(failure.osError === undefined ? {} : { osError: failure.osError }),
    });
    logger.close();
    return;
  }
  const [path, error] = firstError as [string, unknown];
  const os = osErrorOf(error, context.family);
  context.err(
    `${PREFIX} [alert] could not open error log file: open() "${path}" failed${
      os === undefined ? `: ${messageOf(error)}` : ` (${os.code}: ${os.text})`
    }\n`,
  );
}

function report(
  failure: Failure,
  logPath: string | undefined,
  context: StartupContext,
): { exitCode: number } {
  const os = failure.osError === undefined
    ? ""
    : ` (${failure.osError.code}: ${failure.osError.text})`;
  context.err(`${PREFIX} [emerg] ${failure.message}${os}\n`);
  if (failure.hint) context.err(`${PREFIX} see "station-gateway --help"\n`);
  logEmerg(failure, logPath, context);
  return { exitCode: failure.exitCode };
}

/**
 * Reads and validates the configuration: the file (its own values checked
 * alone, so an error names the file), then the flags over it.
 */
function loadConfig(
  cli: CliOptions,
  context: StartupContext,
): GatewayConfig | Failure {
  const family = context.family ?? currentOsFamily();
  let file: SettingsInput = {};
  if (cli.configPath !== undefined) {
    const path = absolute(context.baseDir, cli.configPath);
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (error) {
      // nginx: open() "/etc/nginx/nginx.conf" failed (2: No such file or
      // directory); CreateFile() on Windows (ngx_open_file_n).
      const call = family === "windows" ? "CreateFile()" : "open()";
      const osError = osErrorOf(error, family);
      return {
        message: osError === undefined
          ? `${call} "${path}" failed: ${messageOf(error)}`
          : `${call} "${path}" failed`,
        ...(osError === undefined ? {} : { osError }),
        hint: false,
        exitCode: 1,
      };
    }
    try {
      file = parseConfigFile(text, path);
      resolveConfig(file, {}, context.baseDir);
    } catch (error) {
      const message = messageOf(error);
      return {
        message: message.includes(` in ${path}`)
          ? message
          : `${message} in ${path}`,
        hint: true,
        exitCode: 1,
      };
    }
  }
  try {
    return resolveConfig(file, cli.settings, context.baseDir);
  } catch (error) {
    return { message: messageOf(error), hint: true, exitCode: 1 };
  }
}

function openLogs(
  config: GatewayConfig,
  context: StartupContext,
): Logger | Failure {
  const family = context.family ?? currentOsFamily();
  const options = {
    maxBytes: config.logMaxBytes,
    keep: config.logKeep,
    onError: (message: string) => context.err(`${PREFIX} [alert] ${message}\n`),
  };
  const opened: LogFile[] = [];
  for (const path of [config.errorLog, config.accessLog]) {
    if (path === null) continue;
    try {
      opened.push(LogFile.open(path, options));
    } catch (error) {
      for (const log of opened) log.close();
      const osError = osErrorOf(error, family);
      const call = family === "windows" ? "CreateFile()" : "open()";
      return {
        message: osError === undefined
          ? `${call} "${path}" failed: ${messageOf(error)}`
          : `${call} "${path}" failed`,
        ...(osError === undefined ? {} : { osError }),
        hint: false,
        exitCode: 1,
      };
    }
  }
  return createLogger({
    errorLog: opened[0]!,
    accessLog: opened[1] ?? null,
    level: config.errorLogLevel,
  });
}

async function check(
  config: GatewayConfig,
  context: StartupContext,
): Promise<number> {
  const findings = await checkConfig(config, {
    ...context.check,
    ...(context.family === undefined ? {} : { family: context.family }),
  });
  let failed = false;
  for (const finding of findings) {
    const os = finding.osError === undefined
      ? ""
      : ` (${finding.osError.code}: ${finding.osError.text})`;
    const level = finding.level === undefined ? "" : ` [${finding.level}]`;
    context.err(`${PREFIX}${level} ${finding.message}${os}\n`);
    if (finding.level === "emerg") {
      failed = true;
      logEmerg(
        { ...finding, message: finding.message, hint: false, exitCode: 1 },
        config.errorLog,
        context,
      );
    }
  }
  context.err(
    failed
      ? `${PREFIX} configuration test failed\n`
      : `${PREFIX} configuration test is successful\n`,
  );
  return failed ? 1 : 0;
}

/**
 * Parses the command line, loads the configuration and opens the logs, or
 * answers `--help`, `--version` and `--check`.
 *
 * @param args The arguments, without the program.
 * @param context The version, the base folder and the output streams.
 * @returns The configuration and the open logger, or the exit code.
 */
export async function startup(
  args: string[],
  context: StartupContext,
): Promise<Startup> {
  let cli: CliOptions;
  try {
    cli = parseCliArgs(args);
  } catch (error) {
    const given = errorLogArg(args);
    return report(
      {
        message: messageOf(error),
        hint: true,
        exitCode: error instanceof UsageError ? 2 : 1,
      },
      given === undefined ? undefined : absolute(context.baseDir, given),
      context,
    );
  }
  if (cli.help) {
    context.out(formatUsage());
    return { exitCode: 0 };
  }
  if (cli.version) {
    context.out(`station-gateway ${context.version}\n`);
    return { exitCode: 0 };
  }
  const config = loadConfig(cli, context);
  if ("exitCode" in config) {
    const given = cli.settings.errorLog ??
      (cli.configPath === undefined
        ? undefined
        : errorLogInFile(absolute(context.baseDir, cli.configPath)));
    return report(
      config,
      given === undefined ? undefined : absolute(context.baseDir, given),
      context,
    );
  }
  if (cli.check) return { exitCode: await check(config, context) };
  const logger = openLogs(config, context);
  if ("exitCode" in logger) return report(logger, config.errorLog, context);
  return { config, logger };
}
