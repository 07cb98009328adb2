/**
 * station-gateway's entry point: flags and config, logs, `Deno.serve`,
 * signals and exit codes. The only module that reads `Deno.args` or calls
 * `Deno.exit`.
 *
 * Exit codes: 0 after a clean shutdown or `--help`/`--version`; 2 for a bad
 * command line; 1 for a bad configuration or a failed start (port taken, log
 * folder not writable).
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import denoJson from "../deno.json" with { type: "json" };
import { checkConfig } from "./check.ts";
import { formatUsage, parseCliArgs } from "./cli.ts";
import {
  DEFAULT_SETTINGS,
  type GatewayConfig,
  resolveConfig,
} from "./config.ts";
import {
  type FileInput,
  formatConfigFile,
  parseConfigFile,
} from "./config_file.ts";
import { ConnectionCounter } from "./connection_counter.ts";
import type { OsErrorText } from "./error_log.ts";
import { createGatewayHandler } from "./gateway.ts";
import { HeapPacer } from "./heap_pacer.ts";
import { LogFile } from "./log_file.ts";
import { createLogger, type Logger } from "./logger.ts";
import { loadNginxConf, nginxPrefix } from "./nginx_conf/mod.ts";
import { formatTaskUsage, parseTaskArgs, runTask } from "./task_command.ts";
import { createUpstreamGroup } from "./upstream_group.ts";
import { osErrorOf } from "./upstream_error.ts";

/** The gateway's version, from `deno.json`. */
export const VERSION: string = denoJson.version;

/** How long in-flight requests may take to finish at shutdown. */
const SHUTDOWN_GRACE_MS = 10_000;

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

/** A station's nginx.conf the gateway cannot run from, in nginx's words. */
class NginxConfFailure extends Error {
  constructor(
    message: string,
    readonly path: string,
    readonly warnings: string[],
  ) {
    super(message);
  }
}

interface LoadedConfig {
  config: GatewayConfig;
  /** Defaults, nginx.conf, config file and flags merged, for --print-config. */
  merged: FileInput;
  /** The nginx.conf's `[warn]` texts. */
  warnings: string[];
  /** The nginx.conf read, absolute, if any. */
  nginxConf: string | null;
}

function loadConfig(args: ReturnType<typeof parseCliArgs>): LoadedConfig {
  const base = baseDir();
  const absolute = (path: string) =>
    resolveConfig({}, { root: path }, base).root;
  let file: FileInput = {};
  if (args.configPath !== undefined) {
    const path = absolute(args.configPath);
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
  // Layers, later ones winning: defaults, nginx.conf, config file, flags.
  const nginxPath = args.nginxConfPath ?? file.nginxConf;
  let nginx: FileInput = {};
  let warnings: string[] = [];
  let nginxConf: string | null = null;
  if (nginxPath !== undefined) {
    nginxConf = absolute(nginxPath);
    const result = loadNginxConf(nginxConf);
    if (!result.ok) {
      throw new NginxConfFailure(result.message, nginxConf, result.warnings);
    }
    ({ settings: nginx, warnings } = result);
  }
  const layered = { ...nginx, ...file };
  return {
    config: resolveConfig(layered, args.settings, base),
    merged: { ...DEFAULT_SETTINGS, ...layered, ...args.settings },
    warnings,
    nginxConf,
  };
}

/**
 * Reports an nginx.conf the gateway cannot run from: on stderr, and in the
 * nginx prefix's default error log (where nginx would have written it), so
 * a scheduled task's failed start leaves a line behind.
 */
function nginxConfFailed(error: NginxConfFailure, check: boolean): number {
  for (const w of error.warnings) stderr(`station-gateway: [warn] ${w}\n`);
  if (check) {
    stderr(`station-gateway: [emerg] ${error.message}\n`);
    stderr(
      `station-gateway: configuration file ${error.path} test failed\n`,
    );
    return 1;
  }
  let logger: Logger | undefined;
  try {
    const errorLog = LogFile.open(
      resolveConfig({}, { errorLog: "logs/error.log" }, nginxPrefix(error.path))
        .errorLog,
    );
    logger = createLogger({ errorLog, accessLog: null, level: "error" });
  } catch {
    // No log folder: stderr is all there is.
  }
  emerg(error.message, undefined, logger);
  logger?.close();
  return 1;
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

/** The addresses to bind: `localhost` is both loopbacks, IPv4 first. */
function listenHosts(hostname: string): string[] {
  return hostname === "localhost" ? ["127.0.0.1", "::1"] : [hostname];
}

function displayHost(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/**
 * Runs the gateway until a signal stops it.
 *
 * @param args The command-line arguments.
 * @returns The process exit code.
 */
export async function main(args: string[]): Promise<number> {
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

  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(cli);
  } catch (error) {
    if (error instanceof NginxConfFailure) {
      return nginxConfFailed(error, cli.check);
    }
    stderr(`station-gateway: ${(error as Error).message}\n\n${formatUsage()}`);
    return 1;
  }
  const { config } = loaded;
  for (const w of loaded.warnings) stderr(`station-gateway: [warn] ${w}\n`);

  if (cli.printConfig) {
    stdout(formatConfigFile(loaded.merged, config));
    return 0;
  }
  if (cli.check) {
    if (loaded.nginxConf !== null) {
      stderr(
        `station-gateway: the configuration file ${loaded.nginxConf} syntax is ok\n`,
      );
    }
    return checkConfig(config, (line) => stderr(`${line}\n`));
  }

  let logger: Logger;
  try {
    logger = openLogs(config);
  } catch {
    return 1;
  }
  for (const w of loaded.warnings) logger.error({ level: "warn", message: w });

  const counter = new ConnectionCounter();
  const servers: Deno.HttpServer<Deno.NetAddr>[] = [];
  let port = config.listen.port;
  let handler: ReturnType<typeof createGatewayHandler> | null = null;
  for (const hostname of listenHosts(config.listen.hostname)) {
    try {
      const server = Deno.serve({
        hostname,
        port,
        onListen() {},
        onError(error) {
          logger.error({
            level: "alert",
            message: `unexpected error: ${error}`.replaceAll("\n", " "),
          });
          return new Response("Internal Server Error", { status: 500 });
        },
      }, (req, info) => handler!(req, info));
      port = server.addr.port;
      servers.push(server);
    } catch (error) {
      const address = `${displayHost(hostname)}:${port}`;
      const optionalV6 = hostname === "::1" && servers.length > 0 &&
        !(error instanceof Deno.errors.AddrInUse);
      if (optionalV6) {
        // No IPv6 loopback on this machine: 127.0.0.1 alone serves localhost.
        logger.error({
          level: "notice",
          message: `bind() to ${address} failed, listening on IPv4 only`,
          ...(osErrorOf(error) ? { osError: osErrorOf(error)! } : {}),
        });
        continue;
      }
      emerg(`bind() to ${address} failed`, osErrorOf(error), logger);
      await Promise.all(servers.map((s) => s.shutdown()));
      logger.close();
      return 1;
    }
  }
  const group = createUpstreamGroup(config.upstreamGroup, config.upstreams, {
    timeouts: config.timeouts,
    keepalive: config.upstreamKeepalive,
    onConnect: () => counter.take(),
  });
  handler = createGatewayHandler({
    root: config.root,
    serverName: config.serverName,
    publicPort: port,
    addForwardedHeaders: config.addForwardedHeaders,
    maxBodySize: config.clientMaxBodySize,
    tunnelIdleTimeoutMs: config.timeouts.readMs,
    ...(config.statusPath === null ? {} : { statusPath: config.statusPath }),
    version: VERSION,
    spaFallback: config.spaFallback,
    logNotFound: config.logNotFound,
    cachePolicy: config.cachePolicy,
    apiPrefix: config.apiPrefix,
    keepApiPrefix: config.keepApiPrefix,
  }, { logger, counter, group });

  const heapPacer = new HeapPacer();
  heapPacer.start();

  const urls = servers.map((s) =>
    `http://${displayHost(s.addr.hostname)}:${port}/`
  );
  stdout(
    `station-gateway ${VERSION} listening on ${urls.join(" and ")}; ` +
      `/${config.apiPrefix}/ -> ${
        config.upstreams.map((u) => u.address.origin + "/").join(", ")
      }; root ${config.root}; ` +
      `error log ${config.errorLog}\n`,
  );
  logger.error({
    level: "notice",
    message: `station-gateway/${VERSION} started`,
  });

  // An exception that escapes a request (a bug) must not end a gateway that
  // nobody watches: log it and keep serving.
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    logger.error({
      level: "alert",
      message: `unhandled rejection: ${event.reason}`.replaceAll("\n", " "),
    });
  });

  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT", "SIGBREAK"]
    : ["SIGINT", "SIGTERM"];
  const numbers: Partial<Record<Deno.Signal, number>> = {
    SIGINT: 2,
    SIGTERM: 15,
    SIGBREAK: 21,
  };
  const stopped = Promise.withResolvers<Deno.Signal>();
  const listeners = signals.map((signal) => {
    const listener = () => stopped.resolve(signal);
    Deno.addSignalListener(signal, listener);
    return [signal, listener] as const;
  });
  const signal = await stopped.promise;
  for (const [s, l] of listeners) Deno.removeSignalListener(s, l);

  logger.error({
    level: "notice",
    message: `signal ${numbers[signal]} (${signal}) received, exiting`,
  });
  const graceful = Promise.all(servers.map((s) => s.shutdown()));
  const timer = new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS, "timeout"));
  const outcome = await Promise.race([graceful.then(() => "done"), timer]);
  if (outcome === "timeout") {
    logger.error({
      level: "warn",
      message:
        `in-flight requests still open after ${SHUTDOWN_GRACE_MS} ms, exiting`,
    });
  }
  group.close();
  heapPacer.stop();
  logger.error({ level: "notice", message: "exit" });
  logger.close();
  return 0;
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
