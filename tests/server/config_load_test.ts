/** Reading the configuration for a start, and naming the log a failure goes to. */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { GATEWAY_FLAGS, MAIN } from "../_utils.ts";
import { runStartup } from "../_in_process.ts";
import { parseCliArgs } from "../../src/config/cli.ts";
import { startup } from "../../src/server/startup.ts";
import {
  loadConfig,
  namedErrorLog,
  openFailure,
} from "../../src/server/config_load.ts";

Deno.test("openFailure() words a config file that cannot be opened as nginx does, per platform", () => {
  deepStrictEqual(
    openFailure(
      "C:\\StationGateway\\gateway.json",
      new Deno.errors.NotFound("系统找不到指定的文件。 (os error 2)"),
      "windows",
    ),
    {
      message: 'CreateFile() "C:\\StationGateway\\gateway.json" failed',
      osError: { code: 2, text: "The system cannot find the file specified" },
      hint: false,
      exitCode: 1,
    },
  );
  deepStrictEqual(
    openFailure(
      "/opt/gw/gateway.json",
      new Deno.errors.PermissionDenied(
        "Permission denied (os error 13): readfile '/opt/gw/gateway.json'",
      ),
      "linux",
    ),
    {
      message: 'open() "/opt/gw/gateway.json" failed',
      osError: { code: 13, text: "Permission denied" },
      hint: false,
      exitCode: 1,
    },
  );
});

Deno.test("loadConfig() names the file for its own bad values, even when a flag overrides them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/gw.json`,
      JSON.stringify({ upstream: "ftp://x", listen: "9000" }),
    );
    const failure = loadConfig(
      parseCliArgs(["--config", "gw.json", "--upstream", "http://10.0.0.5"]),
      { baseDir: dir },
    );
    deepStrictEqual(failure, {
      message:
        `Cannot parse upstream "ftp://x": expected an http URL with a host, like http://127.0.0.1:8080 in ${
          join(dir, "gw.json")
        }`,
      hint: true,
      exitCode: 1,
    });
    await Deno.writeTextFile(`${dir}/gw.json`, '{"listen": "9000"}');
    const config = loadConfig(
      parseCliArgs(["--config", "gw.json", "--listen", "9001"]),
      { baseDir: dir },
    );
    strictEqual("exitCode" in config ? 0 : config.config.listen.port, 9001);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("namedErrorLog() finds the log a failed start should write to", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/gw.json`,
      '{"errorLog": "from-file.log", "upstrem": "x"}',
    );
    const cases: [string, string[], boolean, string | undefined][] = [
      ["the flag", ["--error-log", "/var/e.log"], true, "/var/e.log"],
      [
        "the flag, relative",
        ["--error-log", "e.log"],
        true,
        join(dir, "e.log"),
      ],
      [
        "raw, after a bad flag",
        ["--bad", "--error-log", "/x.log"],
        false,
        "/x.log",
      ],
      ["raw, with =", ["--bad", "--error-log=/y.log"], false, "/y.log"],
      [
        "the file's, though the file is invalid",
        ["--config", "gw.json"],
        true,
        join(dir, "from-file.log"),
      ],
      [
        "the flag over the file's",
        ["--config", "gw.json", "--error-log", "/f.log"],
        true,
        "/f.log",
      ],
      ["none", [], true, undefined],
      ["a missing file", ["--config", "none.json"], true, undefined],
    ];
    for (const [name, args, parses, expected] of cases) {
      await t.step(name, () => {
        strictEqual(
          namedErrorLog(args, parses ? parseCliArgs(args) : undefined, dir),
          expected,
        );
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs the gateway's start as a process, killed after 30 s. */
async function startAsProcess(
  args: string[],
): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", ...GATEWAY_FLAGS, MAIN, ...args],
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("a config file that is /dev/zero, a FIFO, a folder or too large is one [emerg] and exit 1, at once", async (t) => {
  if (Deno.build.os === "windows") return;
  const dir = await Deno.makeTempDir();
  try {
    // Every target in the prefix's conf/ (/dev/zero through a link): a
    // refused nginx.conf's [emerg] goes to its prefix's logs/error.log, and
    // the prefix of /dev/zero itself is /.
    const conf = join(dir, "conf");
    await Deno.mkdir(join(conf, "folder"), { recursive: true });
    const zero = join(conf, "zero");
    await Deno.symlink("/dev/zero", zero);
    const fifo = join(conf, "fifo");
    if (Deno.build.os === "linux") {
      await new Deno.Command("mkfifo", { args: [fifo] }).output();
    }
    const folder = join(conf, "folder");
    const big = join(conf, "big.conf");
    await Deno.writeTextFile(big, "#".repeat(5 * 1024 * 1024));
    const targets = [zero, folder, big];
    if (Deno.build.os === "linux") targets.push(fifo);
    for (const target of targets) {
      const including = join(
        conf,
        `includes_${targets.indexOf(target)}.conf`,
      );
      await Deno.writeTextFile(including, `http { include ${target}; }\n`);
      for (
        const args of [["--config", target], ["--nginx-conf", target], [
          "--nginx-conf",
          including,
        ]]
      ) {
        await t.step(args.join(" "), async () => {
          const line = [...args, "--error-log", join(dir, "error.log")];
          // A read that never ends (/dev/zero, a FIFO without a writer,
          // whose open() blocks the thread) is bounded only in a process of
          // its own; a folder or a large file cannot hang main()'s start,
          // which then runs in this process.
          const { code, stderr } = target === folder || target === big
            ? await runStartup(line)
            : await startAsProcess(line);
          strictEqual(code, 1, stderr);
          const emerg = stderr.split("\n").filter((l) => l.includes("[emerg]"));
          strictEqual(emerg.length, 1, stderr);
          match(
            emerg[0]!,
            new RegExp(
              `\\[emerg\\] "${
                target.replaceAll(/[.\\/]/g, "\\$&")
              }" is (not a regular file|larger than)`,
            ),
          );
        });
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startup() ends a config file's mistake with what the file wants, not a pointer to --help", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string, RegExp][] = [
      [
        '{"listen": "8081",}',
        /the config file is JSON: .*no comma after the last entry.*e\.g\. \{"upstream": /,
      ],
      [
        "{'listen': 8081}",
        /the config file is JSON: names and texts in double quotes/,
      ],
      [
        '{"proxy-read-timeout": "5"}',
        /the keys are the flags' names in camelCase .*"proxyReadTimeout"/,
      ],
      ['{"serverName": 7}', /the keys are the flags' names in camelCase/],
    ];
    for (const [text, hint] of cases) {
      await Deno.writeTextFile(`${dir}/gw.json`, text);
      const err: string[] = [];
      const start = await startup(
        ["--config", `${dir}/gw.json`, "--error-log", `${dir}/error.log`],
        { version: "t", baseDir: dir, out() {}, err: (t) => void err.push(t) },
      );
      strictEqual("exitCode" in start && start.exitCode, 1, text);
      const lines = err.join("").trimEnd().split("\n");
      strictEqual(lines.length, 2, err.join(""));
      match(lines[0]!, /^station-gateway: \[emerg\] /);
      match(lines[1]!, hint, text);
      strictEqual(lines[1]!.includes("--help"), false, text);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startup() warns once, at start, that the client-app folder is missing (nginx would 404 each request)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (
      const [root, warned] of [[`${dir}/html`, true], [dir, false]] as const
    ) {
      const err: string[] = [];
      const start = await startup(
        [
          "--root",
          root,
          "--error-log",
          `${dir}/error.log`,
          "--access-log",
          "off",
          // nginx's default level (error) leaves warnings out of the log.
          "--error-log-level",
          "warn",
        ],
        { version: "t", baseDir: dir, out() {}, err: (t) => void err.push(t) },
      );
      strictEqual("config" in start, true);
      if ("config" in start) start.logger.close();
      const line =
        `client app folder "${root}" does not exist: the built-in page will be served at /`;
      strictEqual(
        err.join(""),
        warned ? `station-gateway: [warn] ${line}\n` : "",
      );
      const log = await Deno.readTextFile(`${dir}/error.log`).catch(() => "");
      strictEqual(log.includes(`[warn]`) && log.includes(line), warned, log);
      await Deno.remove(`${dir}/error.log`).catch(() => {});
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
