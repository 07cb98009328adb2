/**
 * Reading the configuration for a start: the config file (its own values
 * checked alone, so an error names the file, as nginx's
 * `… in /etc/nginx/nginx.conf:3`), then the flags over it. Failures are
 * returned as data for `startup.ts` to report.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import type { CliOptions } from "../config/mod.ts";
import { type GatewayConfig, resolveConfig } from "../config/mod.ts";
import { type FileInput, parseConfigFile } from "../config/mod.ts";
import type { OsErrorText } from "../runtime/mod.ts";
import { loadNginxConf, nginxPrefix } from "../nginx_conf/mod.ts";
import type { HttpConf } from "../engine/mod.ts";
import { currentOsFamily, osErrorOf, type OsFamily } from "../runtime/mod.ts";
import { ConfigFileRefusal, readConfigText } from "../runtime/mod.ts";

/**
 * The largest JSON config file read: a full one with every key is under
 * 2 KiB, so 1 MiB leaves room for any comment while `/dev/zero` or a log
 * named by mistake fails at once instead of filling memory.
 */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/**
 * After a JSON syntax error in the config file: what JSON wants. (Not
 * `--print-config`: it prints nginx.conf text, not a JSON file.)
 */
const JSON_HINT =
  'the config file is JSON: names and texts in double quotes, no comma after the last entry, no comments, e.g. {"upstream": "http://10.0.0.5", "proxyReadTimeout": "60s"}';

/** After an unknown key or a wrong type in the config file. */
const KEYS_HINT =
  'the keys are the flags\' names in camelCase ("--proxy-read-timeout" is "proxyReadTimeout")';

/**
 * The line after a config file's mistake: what JSON wants, or how keys are
 * named; a bad value keeps `see --help`, which lists each flag's format.
 */
function configFileHint(message: string): { hintText?: string } {
  if (/^(invalid JSON|expected a JSON object) in /.test(message)) {
    return { hintText: JSON_HINT };
  }
  if (/^(unknown key|key) "/.test(message)) return { hintText: KEYS_HINT };
  return {};
}

/** A failure to start, as data until it is reported. */
export interface StartupFailure {
  /** The message, as nginx words it. */
  message: string;
  /** The OS error, printed after the message. */
  osError?: OsErrorText;
  /** Print `see --help` after it (the command line or config is at fault). */
  hint: boolean;
  /** A line that helps more than `see --help`, printed instead. */
  hintText?: string;
  /** 2 for a misused command line, 1 otherwise. */
  exitCode: 1 | 2;
  /**
   * The error log to write the line to, when the failure itself names it
   * (a refused nginx.conf: its prefix's `logs/error.log`, where nginx
   * would have written it).
   */
  logPath?: string;
  /** `[warn]` texts found before the failure (an nginx.conf's). */
  warnings?: string[];
  /** The nginx.conf that failed, for `--check`'s "test failed" line. */
  nginxConf?: string;
  /**
   * The file's other refusals after `message`: one run names them all,
   * where nginx stops at the first.
   */
  more?: string[];
}

/** A configuration that loaded, with what `--print-config` and `--check` show. */
export interface LoadedConfig {
  /** The resolved configuration. */
  config: GatewayConfig;
  /** The nginx.conf's `[warn]` texts, each ending `in FILE:LINE`. */
  warnings: string[];
  /** The nginx.conf read, absolute, if any. */
  nginxConf: string | null;
  /** The nginx.conf as the engine runs it (includes in place), if any. */
  nginxText?: string;
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
 * Reads and validates the configuration. Layers, later ones winning:
 * defaults, a station's nginx.conf (`--nginx-conf` or the file's
 * `nginxConf`), the config file, the flags.
 *
 * @param cli The parsed command line.
 * @param options The base folder and the OS numbering.
 * @returns The configuration, or the failure.
 */
export function loadConfig(
  cli: CliOptions,
  options: { baseDir: string; family?: OsFamily },
): LoadedConfig | StartupFailure {
  let file: FileInput = {};
  if (cli.configPath !== undefined) {
    const path = absolutePath(options.baseDir, cli.configPath);
    let text: string;
    try {
      text = readConfigText(path, CONFIG_FILE_MAX_BYTES);
    } catch (error) {
      if (error instanceof ConfigFileRefusal) {
        return { message: error.message, hint: false, exitCode: 1 };
      }
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
        ...configFileHint(message),
        exitCode: 1,
      };
    }
  }
  const nginxPath = cli.nginxConfPath ?? file.nginxConf;
  let nginx: FileInput = {};
  let engine: HttpConf | undefined;
  let nginxText: string | undefined;
  let warnings: string[] = [];
  let nginxConf: string | null = null;
  if (nginxPath !== undefined) {
    nginxConf = absolutePath(options.baseDir, nginxPath);
    const result = loadNginxConf(nginxConf);
    if (!result.ok) {
      return {
        message: result.message,
        hint: false,
        exitCode: 1,
        logPath: absolutePath(nginxPrefix(nginxConf), "logs/error.log"),
        warnings: result.warnings,
        nginxConf,
        ...(result.errors && result.errors.length > 1
          ? { more: result.errors.slice(1) }
          : {}),
      };
    }
    ({ settings: nginx, warnings, engine, text: nginxText } = result);
  }
  const layered = { ...nginx, ...file };
  try {
    return {
      config: {
        ...resolveConfig(layered, cli.settings, options.baseDir),
        ...(engine === undefined ? {} : { engine }),
      },
      warnings,
      nginxConf,
      ...(nginxText === undefined ? {} : { nginxText }),
    };
  } catch (error) {
    return { message: messageOf(error), hint: true, exitCode: 1 };
  }
}

/** The `errorLog` a config file names, read leniently (it may be invalid). */
function errorLogInFile(path: string): string | undefined {
  try {
    const data = JSON.parse(readConfigText(path, CONFIG_FILE_MAX_BYTES));
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
