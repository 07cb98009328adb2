import {
  deepStrictEqual,
  match,
  strictEqual,
  throws,
} from "node:assert/strict";
import {
  parseTaskArgs,
  runTask,
  taskExecutable,
  type TaskIo,
} from "../../src/windows/task_command.ts";
import { taskMain } from "../../src/windows/mod.ts";
import { VERSION } from "../../src/main.ts";
import { runCli } from "../_utils.ts";

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  const runs: string[][] = [];
  const files: [string, Uint8Array][] = [];
  const icacls: string[][] = [];
  const io: TaskIo = {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
    schtasks: (args) => (runs.push(args), Promise.resolve(0)),
    icacls: (args) => (icacls.push(args), Promise.resolve(0)),
    writeFile: (path, bytes) => void files.push([path, bytes]),
    readFile: (path) => files.find(([p]) => p === path)?.[1] ?? null,
    mkdir() {},
  };
  return { io, out, err, runs, files, icacls };
}

/**
 * main()'s task command in this process (`taskMain()` with this Deno as the
 * executable, as main() calls it): its exit code and what it wrote.
 */
async function taskInProcess(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await taskMain(args, {
    execPath: Deno.execPath(),
    os: Deno.build.os,
    version: VERSION,
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
  });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

const WIN = {
  execPath: "C:\\Station\\station-gateway.exe",
  os: "windows",
  version: "1.0.0",
};

Deno.test("parseTaskArgs() separates task options from gateway flags and checks both", () => {
  const t = parseTaskArgs([
    "install",
    "--task-name",
    "gw 2",
    "--user",
    "ST\\kiosk",
    "--listen",
    "8081",
    "--upstream",
    "http://10.0.0.5",
    "--upstream",
    "http://127.0.0.1 backup",
  ]);
  deepStrictEqual([t.action, t.name, t.user, t.atLogon, t.dryRun], [
    "install",
    "gw 2",
    "ST\\kiosk",
    false,
    false,
  ]);
  deepStrictEqual(t.gatewayArgs, [
    "--listen",
    "8081",
    "--upstream",
    "http://10.0.0.5",
    "--upstream",
    "http://127.0.0.1 backup",
  ]);
  throws(() => parseTaskArgs(["start"]), /unknown task action "start"/);
  throws(
    () => parseTaskArgs(["install", "--upstream", "ftp://x"]),
    /Cannot parse upstream "ftp:\/\/x"/,
  );
  throws(
    () => parseTaskArgs(["install", "--bogus"]),
    /unknown option "--bogus"/,
  );
  throws(
    () => parseTaskArgs(["remove", "--listen", "1"]),
    /unexpected argument "--listen" for task remove/,
  );
  throws(
    () => parseTaskArgs(["install", "--task-name", "a/b"]),
    /Cannot parse task-name/,
  );
  throws(
    () => parseTaskArgs(["install", "--user"]),
    /option "--user" needs a value/,
  );
});

Deno.test("runTask() installs: writes UTF-16 XML beside the exe and calls schtasks", async () => {
  const { io, runs, files } = captureIo();
  const code = await runTask(
    parseTaskArgs(["install", "--upstream", "http://10.0.0.5"]),
    WIN,
    io,
  );
  strictEqual(code, 0);
  deepStrictEqual(runs, [[
    "/Create",
    "/XML",
    "C:\\Station\\station-gateway-task.xml",
    "/TN",
    "station-gateway",
    "/F",
  ]]);
  strictEqual(files[0]![0], "C:\\Station\\station-gateway-task.xml");
  deepStrictEqual([...files[0]![1].slice(0, 2)], [0xff, 0xfe]);
});

Deno.test("runTask() removes and queries by name", async () => {
  const { io, runs } = captureIo();
  await runTask(parseTaskArgs(["remove", "--task-name", "gw"]), WIN, io);
  await runTask(parseTaskArgs(["status", "--task-name", "gw"]), WIN, io);
  deepStrictEqual(runs, [["/Delete", "/TN", "gw", "/F"], [
    "/Query",
    "/TN",
    "gw",
    "/V",
    "/FO",
    "LIST",
  ]]);
});

Deno.test("runTask() explains it is Windows-only elsewhere, and refuses deno.exe", async () => {
  const linux = captureIo();
  strictEqual(
    await runTask(
      parseTaskArgs(["install"]),
      { ...WIN, os: "linux" },
      linux.io,
    ),
    1,
  );
  match(linux.err.join(""), /scheduled tasks exist on Windows only/);
  strictEqual(linux.out.join(""), "");
  strictEqual(linux.runs.length, 0);
  const deno = captureIo();
  strictEqual(
    await runTask(parseTaskArgs(["install"]), {
      ...WIN,
      execPath: "C:\\deno\\deno.exe",
    }, deno.io),
    1,
  );
  match(deno.err.join(""), /registers the compiled station-gateway\.exe/);
});

Deno.test("runTask() --dry-run prints the command and XML and runs nothing", async () => {
  const { io, out, runs, files } = captureIo();
  const code = await runTask(
    parseTaskArgs([
      "install",
      "--dry-run",
      "--executable",
      "C:\\Station Gateway\\station-gateway.exe",
      "--root",
      "C:\\Station Gateway\\app",
    ]),
    { ...WIN, os: "linux" },
    io,
  );
  strictEqual(code, 0);
  strictEqual(runs.length + files.length, 0);
  const text = out.join("");
  match(
    text,
    /^schtasks \/Create \/XML "C:\\Station Gateway\\station-gateway-task\.xml" \/TN station-gateway \/F\n/m,
  );
  match(
    text,
    /<Arguments>--root &quot;C:\\Station Gateway\\app&quot;<\/Arguments>/,
  );
});

Deno.test("main() task: usage and a bad value, and a dry run through the real CLI", async () => {
  // In process: the way out of main() and the run flags are the dry run's
  // process below.
  const usage = await taskInProcess([]);
  strictEqual(usage.code, 2);
  match(usage.stderr, /station-gateway task install/);
  const bad = await taskInProcess(["install", "--upstream", "x"]);
  strictEqual(bad.code, 1, "a bad value exits 1, as it does without task");
  match(bad.stderr, /^station-gateway: Cannot parse upstream "x"/);
  // A process: main() hands "task" to the task command, which runs under
  // the gateway's run flags, and its exit code reaches the shell.
  const dry = await runCli([
    "task",
    "install",
    "--dry-run",
    "--executable",
    "C:\\S\\station-gateway.exe",
  ]);
  strictEqual(dry.code, 0);
  match(dry.stdout, /<ExecutionTimeLimit>PT0S<\/ExecutionTimeLimit>/);
});

Deno.test("taskExecutable() prefers the console-less build beside this one", () => {
  strictEqual(
    taskExecutable(
      "C:\\S\\station-gateway.exe",
      (p) => p === "C:\\S\\station-gateway-noconsole.exe",
    ),
    "C:\\S\\station-gateway-noconsole.exe",
  );
  strictEqual(
    taskExecutable("C:\\S\\station-gateway.exe", () => false),
    "C:\\S\\station-gateway.exe",
  );
  strictEqual(
    taskExecutable("C:\\S\\station-gateway-noconsole.exe", () => false),
    "C:\\S\\station-gateway-noconsole.exe",
  );
});

Deno.test("main() task: an error is one line and the hint on stderr; 2 for misuse, 1 for a bad value", async (t) => {
  const cases: [string[], number, RegExp][] = [
    [["task", "start"], 2, /^station-gateway: unknown task action "start"/],
    [
      ["task", "install", "--dry-run", "--lisen", "8081"],
      2,
      /^station-gateway: unknown option "--lisen"; did you mean "--listen"\?\n/,
    ],
    [
      ["task", "install", "--dry-run", "--upstream", "https://10.0.0.5"],
      1,
      /^station-gateway: Cannot parse upstream "https:\/\/10\.0\.0\.5"/,
    ],
    [
      ["task", "status"],
      Deno.build.os === "windows" ? -1 : 1,
      /^station-gateway: task status: scheduled tasks exist on Windows only/,
    ],
  ];
  for (const [args, code, message] of cases) {
    if (code === -1) continue;
    await t.step(args.join(" "), async () => {
      // main()'s task command in process: the real CLI's way out is the
      // test above.
      const run = await taskInProcess(args.slice(1));
      strictEqual(run.code, code, run.stderr);
      match(run.stderr, message);
      strictEqual(run.stdout, "", "errors go to stderr");
      strictEqual(run.stderr.split("\n").length <= 3, true, run.stderr);
    });
  }
});

Deno.test("runTask() refuses a dry run that would register Deno itself", async () => {
  for (const execPath of ["/usr/local/bin/deno", "C:\\deno\\deno.exe"]) {
    const { io, out, err } = captureIo();
    const code = await runTask(
      parseTaskArgs(["install", "--dry-run"]),
      { ...WIN, execPath, os: "linux" },
      io,
    );
    strictEqual(code, 1);
    strictEqual(out.join(""), "");
    match(err.join(""), /registers the compiled station-gateway\.exe/);
  }
  // In process, this Deno as the executable: the real CLI's way out is the
  // dry run's process above.
  const run = await taskInProcess(["install", "--dry-run"]);
  strictEqual(run.code, 1);
  strictEqual(run.stdout, "", "no task with deno as its command is shown");
  match(run.stderr, /deno task compile/);
});
