/**
 * Reading the configuration for a start: the config file (its own values
 * checked alone, so an error names the file, as nginx's
 * `… in /etc/nginx/nginx.conf:3`), then the flags over it. Failures are
 * returned as data for `startup.ts` to report.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import type { CliOptions } from "./cli.ts";
import {
  type GatewayConfig,
  resolveConfig,
  type SettingsInput,
} from "./config.ts";
import { parseConfigFile } from "./config_file.ts";
import type { OsErrorText } from "./error_log.ts";
import { currentOsFamily, osErrorOf, type OsFamily } from "./os_errors.ts";

/** A failure to start, as data until it is reported. */
export interface StartupFailure {
  /** The message, as nginx words it. */
  message: string;
  /** The OS error, printed after the message. */
  osError?: OsErrorText;
  /** Print `see --help` after it (the command line or config is at fault). */
  hint: boolean;
  /** 2 for a misused command line, 1 otherwise. */
  exitCode: 1 | 2;
}

/**
 * Anchors a path at the base folder unless it is absolute.
 *
 * @param baseDir The folder relative paths start from.
 * @param path The path.
 * @returns The absolute path.
 */
export function absolutePath(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The failure to open a file, as nginx words it: `open() "…" failed (2: No
 * such file or directory)`, `CreateFile()` on Windows (`ngx_open_file_n`).
 *
 * @param path The file.
 * @param error What Deno threw.
 * @param family Whose numbering and call name to use.
 * @returns The failure (exit code 1, no hint).
 */
export function openFailure(
  path: string,
  error: unknown,
  family: OsFamily = currentOsFamily(),
): StartupFailure {
  const call = family === "windows" ? "CreateFile()" : "open()";
  const osError = osErrorOf(error, family);
  return osError === undefined
    ? {
      message: `${call} "${path}" failed: ${messageOf(error)}`,
      hint: false,
      exitCode: 1,
    }
    : {
      message: `${call} "${path}" failed`,
      osError,
      hint: false,
      exitCode: 1,
    };
}

/**
 * Reads and validates the configuration.
 *
 * @param cli The parsed command line.
 * @param options The base folder and the OS numbering.
 * @returns The configuration, or the failure.
 */
export function loadConfig(
  cli: CliOptions,
  options: { baseDir: string; family?: OsFamily },
): GatewayConfig | StartupFailure {
  let file: SettingsInput = {};
  if (cli.configPath !== undefined) {
    const path = absolutePath(options.baseDir, cli.configPath);
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (error) {
      return openFailure(path, error, options.family);
    }
    try {
      file = parseConfigFile(text, path);
      // A bad value in the file is reported as the file's, even when a
      // flag overrides it.
      resolveConfig(file, {}, options.baseDir);
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
    return resolveConfig(file, cli.settings, options.baseDir);
  } catch (error) {
    return { message: messageOf(error), hint: true, exitCode: 1 };
  }
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
 * The error log a failed start should write to, when it can be told: the
 * `--error-log` flag (read from the raw arguments when they did not
 * parse), else the config file's `errorLog`.
 *
 * @param args The raw arguments.
 * @param cli The parsed command line, when it parsed.
 * @param baseDir The folder relative paths start from.
 * @returns The absolute path, or `undefined`.
 */
export function namedErrorLog(
  args: string[],
  cli: CliOptions | undefined,
  baseDir: string,
): string | undefined {
  let given: string | undefined;
  if (cli === undefined) {
    for (let i = 0; i < args.length && given === undefined; i++) {
      const arg = args[i]!;
      if (arg === "--error-log") given = args[i + 1];
      else if (arg.startsWith("--error-log=")) given = arg.slice(12);
    }
  } else {
    given = cli.settings.errorLog ??
      (cli.configPath === undefined
        ? undefined
        : errorLogInFile(absolutePath(baseDir, cli.configPath)));
  }
  return given === undefined ? undefined : absolutePath(baseDir, given);
}
