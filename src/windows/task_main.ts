/**
 * `station-gateway task …` wired to the process: stdout and stderr, the
 * file system and the real `schtasks`.
 *
 * @module
 */

import { formatConsoleLine } from "../log/mod.ts";
import { UsageError } from "../config/mod.ts";
import { formatTaskUsage, parseTaskArgs, runTask } from "./task_command.ts";

/**
 * `station-gateway task …` as the process runs it: usage, parse errors as
 * one line on stderr (exit 2 for misuse, 1 for a bad setting), then
 * {@linkcode runTask} with the real `schtasks`.
 *
 * @param args The arguments after `task`.
 * @param context The running executable, OS, version and output streams.
 * @returns The exit code.
 */
export async function taskMain(
  args: string[],
  context: {
    execPath: string;
    os: string;
    version: string;
    out(text: string): void;
    err(text: string): void;
  },
): Promise<number> {
  if (args.length === 0 || args.includes("--help") || args.includes("-h")) {
    (args.length === 0 ? context.err : context.out)(formatTaskUsage());
    return args.length === 0 ? 2 : 0;
  }
  let task;
  try {
    task = parseTaskArgs(args);
  } catch (error) {
    context.err(
      formatConsoleLine(
        undefined,
        error instanceof Error ? error.message : String(error),
      ) + formatConsoleLine(undefined, 'see "station-gateway task --help"'),
    );
    return error instanceof UsageError ? 2 : 1;
  }
  return await runTask(task, { ...context, cwd: Deno.cwd() }, {
    out: context.out,
    err: context.err,
    writeFile: (path, bytes) => Deno.writeFileSync(path, bytes),
    readFile: (path) => {
      try {
        return Deno.readFileSync(path);
      } catch {
        return null;
      }
    },
    mkdir: (path) => Deno.mkdirSync(path, { recursive: true }),
    icacls: (icaclsArgs) => run("icacls", icaclsArgs),
    exists: (path) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    },
    schtasks: (schtasksArgs) => run("schtasks", schtasksArgs),
  });
}

/** Runs a Windows tool with the console inherited; its exit code. */
async function run(program: string, args: string[]): Promise<number> {
  const child = new Deno.Command(program, {
    args,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).code;
}
