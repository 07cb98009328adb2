/**
 * The gateway started in this process from a command line, through the
 * start `main()` runs: `runStartup()` for a start that ends (`--check`,
 * `--print-config`, a refusal) and `startMain()` for one that serves. A
 * `deno run` of the gateway costs about 0.25 s of CPU before its first
 * request; `spawnGateway()` and `runCli()` (`_utils.ts`) stay for what only
 * a process shows.
 *
 * @module
 */
import { startServing, startup } from "../src/server/mod.ts";
import { VERSION } from "../src/main.ts";
import { GATEWAY_FLAGS, TEST_BASE_DIR } from "./_utils.ts";

/**
 * Runs `main()`'s start in this process (`startup()`: flags, config file,
 * `--help`, `--version`, `--check`, the `[emerg]` line in the log), with
 * `TEST_BASE_DIR` as its folder and stdout and stderr captured: a
 * table of command lines that must be refused costs no `deno run` each
 * (about 0.2 s of CPU). What only the process shows (the exit code reaching
 * the shell, the run flags' permissions) stays with `runCli`.
 *
 * @param args The command line; it must not start serving.
 * @returns The exit code and what was written.
 * @throws When the command line would start the gateway.
 */
export async function runStartup(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const start = await startup(args, {
    version: VERSION,
    baseDir: TEST_BASE_DIR,
    out: (text) => stdout += text,
    err: (text) => stderr += text,
  });
  if (!("exitCode" in start)) {
    start.logger.close();
    throw new Error(`Cannot run ${JSON.stringify(args)} in process: it serves`);
  }
  return { code: start.exitCode, stdout, stderr };
}

/** A gateway started in this process from a command line. */
export interface MainInProcess extends AsyncDisposable {
  /** The first listener's port. */
  port: number;
  /**
   * Every address served, as URLs (`http://127.0.0.1:8081/`): what the
   * process's listening line names.
   */
  urls: string[];
  /** What the start wrote to stdout and stderr (its warnings). */
  output: () => string;
}

/**
 * Starts the gateway in this process from a command line as `main()` does:
 * `startup()` (flags, config file or nginx.conf, the log files), then
 * `startServing()`, with `TEST_BASE_DIR` as its folder. What only
 * the process adds (signals, the fault policy's exit, the listening line,
 * the run flags' permissions) stays with `spawnGateway`; a test
 * that needs the configured gateway, not the process, saves a `deno run`
 * (about 0.25 s of CPU).
 *
 * @param args The command line; it must start serving.
 * @returns The serving gateway; disposing shuts it down and closes its logs.
 * @throws When the start is refused, or a port is taken (as
 * `onFreePort` expects).
 */
export async function startMain(args: string[]): Promise<MainInProcess> {
  let output = "";
  const write = (text: string) => {
    output += text;
  };
  const start = await startup(args, {
    version: VERSION,
    baseDir: TEST_BASE_DIR,
    out: write,
    err: write,
  });
  if ("exitCode" in start) {
    throw new Error(`Cannot start ${JSON.stringify(args)}: ${output}`);
  }
  const { config, logger } = start;
  const started = await startServing(config, { version: VERSION, logger });
  if ("failure" in started) {
    logger.close();
    throw new Error(`Cannot bind ${started.failure.address}`, {
      cause: started.failure.error,
    });
  }
  const { serving } = started;
  return {
    port: serving.port,
    urls: serving.urls,
    output: () => output,
    async [Symbol.asyncDispose]() {
      serving.stopping();
      await serving.shutdown();
      serving.close();
      logger.close();
    },
  };
}

/**
 * The permissions of the gateway's run flags (`GATEWAY_FLAGS`) as a test's
 * `permissions` (`Deno.test({ permissions: gatewayPermissions() }, …)`): a
 * gateway started in process under them is refused what a process run with
 * the flags would be, with no `deno run`. The V8 flags still need the
 * process.
 *
 * @returns Each permission the flags grant, and `false` for the rest.
 */
export function gatewayPermissions(): Deno.PermissionOptionsObject {
  const granted: Record<string, true | string[]> = {};
  for (const flag of GATEWAY_FLAGS) {
    const m = /^--allow-(env|ffi|net|read|run|sys|write)(?:=(.*))?$/.exec(flag);
    if (m !== null) granted[m[1]!] = m[2]?.split(",") ?? true;
  }
  // Whatever the flags do not grant is refused.
  const none = {
    env: false,
    ffi: false,
    net: false,
    read: false,
    run: false,
    sys: false,
    write: false,
  };
  return { ...none, ...granted } as Deno.PermissionOptionsObject;
}
