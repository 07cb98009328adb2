/**
 * station-gateway's entry point: the start (flags, config, logs:
 * `startup.ts`), then serving until a signal (`server/lifecycle.ts`), and
 * exit codes. The only module that reads `Deno.args` or calls `Deno.exit`.
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
import type { OsErrorText } from "./runtime/mod.ts";
import type { FaultLimits } from "./server/mod.ts";
import { formatConsoleLine, type Logger } from "./log/mod.ts";
import { runGateway, startup } from "./server/mod.ts";
import { taskMain } from "./windows/mod.ts";

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
  stderr(formatConsoleLine("emerg", message, osError));
  logger?.error({ level: "emerg", message, ...(osError ? { osError } : {}) });
}

/** Options for {@linkcode main} that only tests set. */
export interface MainOptions {
  /** How long in-flight requests may take at shutdown. @default {10000} */
  shutdownGraceMs?: number;
  /** When a fault ends the process. */
  faultLimits?: Partial<FaultLimits>;
  /**
   * The first pause before a listener whose accept loop ended binds again,
   * doubling per failure up to 10 s: a test's shorter schedule. @default {500}
   */
  relistenMs?: number;
  /**
   * The folder relative paths start from (see {@linkcode baseDir}): a
   * test's own, so no test writes the project's `logs/`.
   */
  baseDir?: string;
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
  if (args[0] === "task") {
    return await taskMain(args.slice(1), {
      execPath: Deno.execPath(),
      os: Deno.build.os,
      version: VERSION,
      out: stdout,
      err: stderr,
    });
  }
  const start = await startup(args, {
    version: VERSION,
    baseDir: options.baseDir ?? baseDir(),
    out: stdout,
    err: stderr,
  });
  if ("exitCode" in start) return start.exitCode;
  const { baseDir: _, ...runOptions } = options;
  return await runGateway(start.config, {
    version: VERSION,
    logger: start.logger,
    out: stdout,
    emerg: (message, osError) => emerg(message, osError, start.logger),
    ...runOptions,
  });
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
