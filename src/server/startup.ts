/**
 * Everything before the gateway serves: the command line, the config file,
 * `--check`, and opening the logs. A failure here is one `[emerg]` line on
 * stderr and the same line in the error log, as nginx writes
 * `[emerg] unknown directive "x" in /etc/nginx/nginx.conf:3`: the log is
 * the configured one when it can be told from what was given, else
 * `logs/error.log` beside the executable (`emerg_log.ts`).
 *
 * Exit codes: 2 for a misused command line, 1 for a bad configuration or a
 * failed start; errors on stderr.
 *
 * @module
 */

import { checkConfig, type CheckOptions } from "./check.ts";
import { type CliOptions, parseCliArgs, UsageError } from "../config/mod.ts";
import { DEFAULT_SETTINGS, type GatewayConfig } from "../config/mod.ts";
import { builtInConf } from "../nginx_conf/mod.ts";
import {
  absolutePath,
  loadConfig,
  namedErrorLog,
  openFailure,
  type StartupFailure,
} from "./config_load.ts";
import { formatConsoleLine, writeEmergLine } from "../log/mod.ts";
import { LogFile } from "../log/mod.ts";
import { createLogger, type LineSink, type Logger } from "../log/mod.ts";
import type { OsFamily } from "../runtime/mod.ts";
import { formatUsage } from "../config/mod.ts";

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
  /** Whose numbering OS codes use (the running OS when absent). */
  family?: OsFamily;
  /** Options for `--check`'s probes. */
  check?: CheckOptions;
}

/** `error_log stderr`: not a file. */
const STDERR = "stderr";

/** The outcome: serve with these, or exit with this code. */
export type Startup =
  | { exitCode: number }
  | { config: GatewayConfig; logger: Logger };

/** The one place a failed start is told: stderr, then the error log. */
function report(
  failure: StartupFailure,
  logPath: string | undefined,
  context: StartupContext,
): { exitCode: number } {
  for (const w of failure.warnings ?? []) {
    context.err(formatConsoleLine("warn", w));
  }
  context.err(formatConsoleLine("emerg", failure.message, failure.osError));
  for (const message of failure.more ?? []) {
    context.err(formatConsoleLine("emerg", message));
  }
  if (failure.hint) {
    context.err(
      formatConsoleLine(
        undefined,
        failure.hintText ?? 'see "station-gateway --help"',
      ),
    );
  }
  const where = {
    ...(logPath === undefined ? {} : { path: logPath }),
    defaultPath: absolutePath(context.baseDir, DEFAULT_SETTINGS.errorLog),
    err: context.err,
    ...(context.family === undefined ? {} : { family: context.family }),
  };
  writeEmergLine(failure, where);
  for (const message of failure.more ?? []) writeEmergLine({ message }, where);
  return { exitCode: failure.exitCode };
}

function openLogs(
  config: GatewayConfig,
  context: StartupContext,
): Logger | StartupFailure {
  // Told on stderr at once, and to the logger's onFileError once serving:
  // a server's or location's file that fails still reaches the main log.
  const failed = (path: string) => (message: string) => {
    context.err(formatConsoleLine("alert", message));
    logger.onFileError?.(path, message);
  };
  const engine = config.engine;
  // Every log any level writes, each opened once however many levels and
  // kinds name it (rotation and reopening are each file's own).
  const paths = [
    config.errorLog,
    config.accessLog,
    ...(engine?.accessLogFiles ?? []),
    ...(engine?.errorLogFiles ?? []),
  ];
  const opened = new Map<string, LineSink>();
  for (const path of paths) {
    if (path === null || opened.has(path)) continue;
    if (path === STDERR) {
      // `error_log stderr` (ngx_log_set_log): the process's stderr.
      opened.set(path, { write: (line) => context.err(`${line}\n`) });
      continue;
    }
    try {
      opened.set(
        path,
        LogFile.open(path, {
          maxBytes: config.logMaxBytes,
          keep: config.logKeep,
          onError: failed(path),
        }),
      );
    } catch (error) {
      for (const log of opened.values()) log.close?.();
      return openFailure(path, error, context.family);
    }
  }
  const pick = (files: readonly (string | null)[]) =>
    new Map(files.flatMap((path) => {
      const sink = path === null ? undefined : opened.get(path);
      return sink === undefined ? [] : [[path!, sink] as const];
    }));
  const logger: Logger = createLogger({
    errorLog: opened.get(config.errorLog)!,
    accessLog: config.accessLog === null ? null : opened.get(config.accessLog)!,
    accessFiles: pick([config.accessLog, ...(engine?.accessLogFiles ?? [])]),
    errorFiles: pick([config.errorLog, ...(engine?.errorLogFiles ?? [])]),
    level: config.errorLogLevel,
    ...(engine
      ? {
        accessFormat: engine.accessLog.format,
        accessNeedsFields: engine.accessNeedsFields,
        accessCopiesFields: engine.accessCopiesFields,
        accessCountsRequest: engine.accessCountsRequest,
        accessDiscardsBody: engine.accessDiscardsBody,
        // `--error-log`/`--error-log-level` (or the config file) name the
        // main level's log in place of the file's.
        errorLogs: config.errorLog === engine.errorLog.path &&
            config.errorLogLevel === engine.errorLog.level
          ? engine.errorLogs
          : [{ path: config.errorLog, level: config.errorLogLevel }],
      }
      : {}),
  });
  return logger;
}

/** `--check`: the findings on stderr, as `nginx -t` prints them. */
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
    context.err(
      formatConsoleLine(finding.level, finding.message, finding.osError),
    );
    if (finding.level === "emerg") {
      failed = true;
      writeEmergLine(finding, {
        path: config.errorLog,
        defaultPath: absolutePath(context.baseDir, DEFAULT_SETTINGS.errorLog),
        err: context.err,
        ...(context.family === undefined ? {} : { family: context.family }),
      });
    }
  }
  context.err(
    failed
      ? formatConsoleLine(undefined, "configuration test failed")
      : formatConsoleLine(undefined, "configuration test is successful"),
  );
  return failed ? 1 : 0;
}

/**
 * The warning for a client-app folder that is not there, or null.
 *
 * @param root The configured root.
 * @returns The message, as `--check` words it.
 */
async function missingRoot(root: string): Promise<string | null> {
  try {
    if ((await Deno.stat(root)).isDirectory) return null;
  } catch {
    // missing or unreadable: the same for a visitor
  }
  return `client app folder "${root}" does not exist: the built-in page will be served at /`;
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
    return report(
      {
        message: error instanceof Error ? error.message : String(error),
        hint: true,
        exitCode: error instanceof UsageError ? 2 : 1,
      },
      namedErrorLog(args, undefined, context.baseDir),
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
  const loaded = loadConfig(cli, context);
  if ("exitCode" in loaded) {
    const failed = report(
      loaded,
      loaded.logPath ?? namedErrorLog(args, cli, context.baseDir),
      context,
    );
    if (cli.check && loaded.nginxConf !== undefined) {
      // nginx -t's last line.
      context.err(
        formatConsoleLine(
          undefined,
          `configuration file ${loaded.nginxConf} test failed`,
        ),
      );
    }
    return failed;
  }
  const { config, warnings } = loaded;
  for (const w of warnings) context.err(formatConsoleLine("warn", w));
  if (cli.printConfig) {
    // An nginx.conf prints as nginx -T shows it: the text the engine runs.
    // As nginx -T shows what nginx runs: a station's nginx.conf with its
    // includes in place, or the built-in one the settings write.
    context.out(
      loaded.nginxText === undefined
        ? builtInConf(config)
        : `# configuration file ${loaded.nginxConf}:\n${loaded.nginxText}`,
    );
    return { exitCode: 0 };
  }
  if (cli.check) {
    if (loaded.nginxConf !== null) {
      context.err(
        formatConsoleLine(
          undefined,
          `the configuration file ${loaded.nginxConf} syntax is ok`,
        ),
      );
    }
    return { exitCode: await check(config, context) };
  }
  const logger = openLogs(config, context);
  if ("exitCode" in logger) return report(logger, config.errorLog, context);
  for (const w of warnings) logger.error({ level: "warn", message: w });
  // nginx starts without its root and answers 404, naming the file in an
  // [error] line per request; the gateway serves its built-in page there,
  // so the missing folder is said once, at start, where the log is read
  // first (a warning, not a refusal: the app may be copied in later).
  const root = await missingRoot(config.root);
  if (root !== null) {
    context.err(formatConsoleLine("warn", root));
    logger.error({ level: "warn", message: root });
  }
  return { config, logger };
}
