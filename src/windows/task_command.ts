/**
 * `station-gateway task install|remove|status`: registers the gateway as a
 * Windows scheduled task with `schtasks`, or shows what it would run
 * (`--dry-run`, on any OS).
 *
 * @module
 */

import { win32 } from "node:path";
import { parseCliArgs, UsageError } from "../config/mod.ts";
import { resolveConfig } from "../config/mod.ts";
import {
  encodeUtf16Le,
  quoteWindowsArg,
  SCHTASKS,
  serviceAccountSid,
  SYSTEM_SID,
  taskXml,
  windowsDirname,
} from "./scheduled_task.ts";
import { isUncPath, taskExecutable, windowsExecutable } from "./task_paths.ts";

export { taskExecutable } from "./task_paths.ts";
import {
  ICACLS,
  installedTask,
  taskFolderGrants,
  taskNginxConf,
} from "./task_grants.ts";

/** A parsed `task` command line. */
export interface TaskArgs {
  /** What to do. */
  action: "install" | "remove" | "status";
  /** @default {"station-gateway"} */
  name: string;
  /** @default {"LOCAL SERVICE"} */
  user: string;
  /** Also start at logon. */
  atLogon: boolean;
  /** Print, do not run. */
  dryRun: boolean;
  /** The executable to register (defaults to this one). */
  executable?: string;
  /** Gateway flags the task passes on. */
  gatewayArgs: string[];
}

const USAGE = `USAGE:
  station-gateway task install [TASK OPTIONS] [GATEWAY FLAGS]
  station-gateway task remove  [--task-name NAME] [--dry-run]
  station-gateway task status  [--task-name NAME] [--dry-run]

TASK OPTIONS:
  --task-name NAME   The task's name (default: station-gateway)
  --user ACCOUNT     Run as this account: LOCAL SERVICE (the default),
                     SYSTEM, or DOMAIN\\name (asks for its password)
  --at-logon         Also start when a user logs on (always at boot)
  --dry-run          Print the schtasks command and the task XML only
  --executable FILE  The gateway to register (default: this one)

GATEWAY FLAGS are checked now and passed to the gateway when the task runs,
e.g. task install --upstream http://10.20.0.5 --listen 8081
or, from a station's nginx for Windows folder (its nginx.conf is read now):
     task install --nginx-conf C:\\nginx\\conf\\nginx.conf
`;

/** The `task` usage text. */
export function formatTaskUsage(): string {
  return USAGE;
}

/**
 * Parses the words after `task`.
 *
 * @param args The arguments after `task`.
 * @returns The parsed command.
 * @throws {UsageError} On an unknown action or option, a missing value or
 * a stray argument.
 * @throws {TypeError | RangeError} On an invalid gateway setting (checked
 * now so a typo cannot reach a station).
 *
 * @example Usage
 * ```ts
 * import { parseTaskArgs } from "./task_command.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const t = parseTaskArgs(["install", "--at-logon", "--upstream", "http://10.0.0.5"]);
 * deepStrictEqual([t.action, t.atLogon, t.gatewayArgs], ["install", true, ["--upstream", "http://10.0.0.5"]]);
 * ```
 */
export function parseTaskArgs(args: string[]): TaskArgs {
  const [action, ...rest] = args;
  if (action !== "install" && action !== "remove" && action !== "status") {
    throw new UsageError(
      `unknown task action "${
        action ?? ""
      }": expected install, remove or status`,
    );
  }
  const task: TaskArgs = {
    action,
    name: "station-gateway",
    user: "LOCAL SERVICE",
    atLogon: false,
    dryRun: false,
    gatewayArgs: [],
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const value = () => {
      const v = rest[++i];
      if (v === undefined) {
        throw new UsageError(`option "${arg}" needs a value`);
      }
      return v;
    };
    if (arg === "--task-name") task.name = value();
    else if (arg === "--user") task.user = value();
    else if (arg === "--executable") task.executable = value();
    else if (arg === "--at-logon") task.atLogon = true;
    else if (arg === "--dry-run") task.dryRun = true;
    else task.gatewayArgs.push(arg);
  }
  if (!/^[\w .-]+$/.test(task.name)) {
    throw new TypeError(
      `Cannot parse task-name "${task.name}": expected letters, digits, spaces, ".", "_" or "-"`,
    );
  }
  if (task.action !== "install" && task.gatewayArgs.length > 0) {
    throw new UsageError(
      `unexpected argument "${task.gatewayArgs[0]}" for task ${task.action}`,
    );
  }
  const gateway = parseCliArgs(task.gatewayArgs);
  if (gateway.help || gateway.version || gateway.check) {
    throw new UsageError(
      "--help, --version and --check make no sense in a task",
    );
  }
  if (gateway.printConfig) {
    throw new TypeError("--print-config makes no sense in a task");
  }
  // Values too (an upstream URL, a size): a typo fails here, not on a
  // station at the next boot. Paths are only resolved, not required to exist.
  resolveConfig(taskNginxConf(gateway.nginxConfPath), gateway.settings, "C:\\");
  return task;
}

/** Where output goes, so tests can capture it. */
export interface TaskIo {
  /** Writes to stdout. */
  out(text: string): void;
  /** Writes an error to stderr (to `out` when absent). */
  err?(text: string): void;
  /** Runs `schtasks` with arguments, inheriting the console. */
  schtasks(args: string[]): Promise<number>;
  /** Runs `icacls` with arguments (folder grants; needed to install and remove). */
  icacls?(args: string[]): Promise<number>;
  /** Writes the XML file. */
  writeFile(path: string, bytes: Uint8Array): void;
  /** Reads a file, or null when it cannot be read (the installed XML). */
  readFile?(path: string): Uint8Array | null;
  /** Creates a folder and its parents (the log folder before its grant). */
  mkdir?(path: string): void;
  /** Whether a file exists (for the console-less build beside this one). */
  exists?(path: string): boolean;
}

/**
 * Carries out a `task` command.
 *
 * @param task The parsed command.
 * @param context The running executable, OS and version.
 * @param io Output and process seams.
 * @returns The exit code.
 */
export async function runTask(
  task: TaskArgs,
  context: { execPath: string; os: string; version: string; cwd?: string },
  io: TaskIo,
): Promise<number> {
  const err = io.err ?? io.out;
  const executable = windowsExecutable(
    task.executable ??
      taskExecutable(context.execPath, io.exists ?? (() => false)),
    context.cwd ?? "C:\\",
  );
  if (!task.dryRun && context.os !== "windows") {
    err(
      `station-gateway: task ${task.action}: scheduled tasks exist on Windows only; use --dry-run to see what would be registered\n`,
    );
    return 1;
  }
  // Under `deno run` the executable is Deno itself: the task would run
  // Deno with no script, from Deno's folder. A dry run refuses too, rather
  // than show a task that cannot work, unless --executable named it.
  const denoItself = /(^|[\\/])deno(\.exe)?$/i.test(executable);
  if (
    task.action === "install" && denoItself &&
    (!task.dryRun || task.executable === undefined)
  ) {
    err(
      "station-gateway: task install registers the compiled station-gateway.exe; build it with deno task compile and run this from it (or name it with --executable)\n",
    );
    return 1;
  }
  const base = windowsDirname(executable);
  const xmlPath = win32.join(base, `${task.name}-task.xml`);
  // The grants of the installed task come from its XML file: remove takes
  // back what install gave, whatever the flags were.
  const installed = task.action === "remove"
    ? installedTask(io.readFile?.(xmlPath) ?? null)
    : null;
  const user = installed?.user ?? task.user;
  if (
    task.action === "install" && isUncPath(executable) &&
    serviceAccountSid(user) === "S-1-5-19"
  ) {
    err(
      `station-gateway: Cannot use executable "${executable}": LOCAL SERVICE cannot read a network share; copy the executables to a local folder or use --user\n`,
    );
    return 1;
  }
  const { grants, ungranted } = serviceAccountSid(user) === SYSTEM_SID ||
      task.action === "status" || (task.action === "remove" && !installed)
    ? { grants: [], ungranted: [] }
    : taskFolderGrants(
      installed?.args ?? task.gatewayArgs,
      base,
      (p) => {
        const bytes = io.readFile?.(p) ?? null;
        return bytes === null ? null : new TextDecoder().decode(bytes);
      },
    );
  if (task.action === "install") {
    for (const path of ungranted) {
      err(
        `station-gateway: "${path}" starts with a variable: no folder is granted for it; grant the task's account access by hand\n`,
      );
    }
  }
  const icacls = grants.map((g) =>
    task.action === "install"
      ? ICACLS.grant(g, user)
      : ICACLS.remove(g.folder, user)
  );
  const args = task.action === "install"
    ? SCHTASKS.create(task.name, xmlPath, task.user)
    : task.action === "remove"
    ? SCHTASKS.remove(task.name)
    : SCHTASKS.status(task.name);
  const xml = task.action === "install"
    ? taskXml({
      name: task.name,
      executable,
      args: task.gatewayArgs,
      user: task.user,
      atLogon: task.atLogon,
      version: context.version,
    })
    : null;
  if (task.dryRun) {
    for (const a of icacls) {
      io.out(`icacls ${a.map(quoteWindowsArg).join(" ")}\n`);
    }
    io.out(`schtasks ${args.map(quoteWindowsArg).join(" ")}\n`);
    if (xml !== null) io.out(`\n${xmlPath}:\n${xml}`);
    return 0;
  }
  if (task.action === "remove" && installed === null) {
    err(
      `station-gateway: ${xmlPath} is missing: the task is removed, but its folder grants must be removed by hand (icacls FOLDER /remove:g "*S-1-5-19")\n`,
    );
  }
  // Grants before the task exists (it must never start without them);
  // taken back after it is gone.
  if (task.action === "install") {
    for (const g of grants) if (g.access === "write") io.mkdir?.(g.folder);
    const failed = await runAll(icacls, io);
    if (failed !== 0) return failed;
  }
  if (xml !== null) io.writeFile(xmlPath, encodeUtf16Le(xml));
  const code = await io.schtasks(args);
  if (code !== 0 || task.action !== "remove") return code;
  return await runAll(icacls, io);
}

/** Runs each `icacls` command; the first failure's exit code, or 0. */
async function runAll(commands: string[][], io: TaskIo): Promise<number> {
  for (const args of commands) {
    if (!io.icacls) return 1;
    const code = await io.icacls(args);
    if (code !== 0) return code;
  }
  return 0;
}
