/**
 * station-gateway's entry point: flags and config, logs, and exit codes
 * (serving itself is in server_lifecycle.ts). The only module that reads `Deno.args` or calls
 * `Deno.exit`.
 *
 * Exit codes: 0 after a clean shutdown or `--help`/`--version`; 2 for a bad
 * command line; 1 for a bad configuration, a failed start (port taken, log
 * folder not writable) or a fault the gateway does not survive (a listener
 * that cannot be restored: the scheduled task restarts it).
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import denoJson from "../deno.json" with { type: "json" };
import { checkConfig } from "./check.ts";
import { formatUsage, parseCliArgs } from "./cli.ts";
import { type GatewayConfig, resolveConfig } from "./config.ts";
import { parseConfigFile } from "./config_file.ts";
import type { OsErrorText } from "./error_log.ts";
import { LogFile } from "./log_file.ts";
import { createLogger, type Logger } from "./logger.ts";
import { runGateway } from "./server_lifecycle.ts";
import type { FaultLimits } from "./fault_policy.ts";
import { formatTaskUsage, parseTaskArgs, runTask } from "./task_command.ts";
import { osErrorOf } from "./upstream_error.ts";

/** The gateway's version, from `deno.json`. */
export const VERSION: string = denoJson.version;

/**
 * The folder relative paths start from: the executable's folder for the
 * compiled binary (a scheduled task starts in System32: caddyserver/caddy#5115),
 * the project folder under `deno run`.
 */
function baseDir(): string {
  return Deno.build.standalone
    ? dirname(Deno.execPath())
    : fileURLToPath(new URL("..", import.meta.url));
}

/**
 * Writes to stderr, and never fails: a console-less build (`--no-terminal`)
 * or a scheduled task may have no usable stdio handle, and the error log is
 * the channel that must work.
 */
function stderr(text: string): void {
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(text));
  } catch {
    // No console: nothing to do.
  }
}

/** Writes to stdout, and never fails (see {@linkcode stderr}). */
function stdout(text: string): void {
  try {
    Deno.stdout.writeSync(new TextEncoder().encode(text));
  } catch {
    // No console: nothing to do.
  }
}

/** An `[emerg]` line on stderr (nginx: `nginx: [emerg] …`) and in the log. */
function emerg(
  message: string,
  osError: OsErrorText | undefined,
  logger?: Logger,
): void {
  const os = osError ? ` (${osError.code}: ${osError.text})` : "";
  stderr(`station-gateway: [emerg] ${message}${os}\n`);
  logger?.error({ level: "emerg", message, ...(osError ? { osError } : {}) });
}

function loadConfig(args: ReturnType<typeof parseCliArgs>): GatewayConfig {
  const base = baseDir();
  let file = {};
  if (args.configPath !== undefined) {
    const path = resolveConfig({}, { root: args.configPath }, base).root;
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (error) {
      throw new TypeError(
        `Cannot read config file "${path}": ${
          error instanceof Error ? error.message : error
        }`,
      );
    }
    file = parseConfigFile(text, path);
  }
  return resolveConfig(file, args.settings, base);
}

function openLogs(config: GatewayConfig): Logger {
  const options = {
    maxBytes: config.logMaxBytes,
    keep: config.logKeep,
    onError: (message: string) =>
      stderr(`station-gateway: [alert] ${message}\n`),
  };
  const open = (path: string) => {
    try {
      return LogFile.open(path, options);
    } catch (error) {
      emerg(`open() "${path}" failed`, osErrorOf(error));
      throw error;
    }
  };
  const errorLog = open(config.errorLog);
  let accessLog = null;
  try {
    accessLog = config.accessLog === null ? null : open(config.accessLog);
  } catch (error) {
    errorLog.close();
    throw error;
  }
  return createLogger({ errorLog, accessLog, level: config.errorLogLevel });
}

/** Options for {@linkcode main} that only tests set. */
export interface MainOptions {
  /** How long in-flight requests may take at shutdown. @default {10000} */
  shutdownGraceMs?: number;
  /** When a fault ends the process. */
  faultLimits?: Partial<FaultLimits>;
}

/**
 * Runs the gateway until a signal stops it or a fault it cannot survive.
 *
 * @param args The command-line arguments.
 * @param options Settings with no flag, for tests.
 * @returns The process exit code.
 */
export async function main(
  args: string[],
  options: MainOptions = {},
): Promise<number> {
  if (args[0] === "task") return await taskMain(args.slice(1));
  let cli;
  try {
    cli = parseCliArgs(args);
  } catch (error) {
    stderr(`station-gateway: ${(error as Error).message}\n\n${formatUsage()}`);
    return 2;
  }
  if (cli.help) {
    stdout(formatUsage());
    return 0;
  }
  if (cli.version) {
    stdout(`station-gateway ${VERSION}\n`);
    return 0;
  }

  let config: GatewayConfig;
  try {
    config = loadConfig(cli);
  } catch (error) {
    stderr(`station-gateway: ${(error as Error).message}\n\n${formatUsage()}`);
    return 1;
  }

  if (cli.check) {
    return checkConfig(config, (line) => stderr(`${line}\n`));
  }

  let logger: Logger;
  try {
    logger = openLogs(config);
  } catch {
    return 1;
  }

  return await runGateway(config, {
    version: VERSION,
    logger,
    out: stdout,
    emerg: (message, osError) => emerg(message, osError, logger),
    ...options,
  });
}

async function taskMain(args: string[]): Promise<number> {
  if (args.length === 0 || args.includes("--help") || args.includes("-h")) {
    stdout(formatTaskUsage());
    return args.length === 0 ? 2 : 0;
  }
  let task;
  try {
    task = parseTaskArgs(args);
  } catch (error) {
    stderr(
      `station-gateway: ${(error as Error).message}\n\n${formatTaskUsage()}`,
    );
    return 2;
  }
  return await runTask(task, {
    execPath: Deno.execPath(),
    os: Deno.build.os,
    version: VERSION,
  }, {
    out: stdout,
    writeFile: (path, bytes) => Deno.writeFileSync(path, bytes),
    exists: (path) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    },
    schtasks: async (schtasksArgs) => {
      const child = new Deno.Command("schtasks", {
        args: schtasksArgs,
        stdin: "inherit",
        stdout: "inherit",
        stderr: "inherit",
      }).spawn();
      return (await child.status).code;
    },
  });
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
