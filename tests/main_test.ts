/**
 * The program as a station runs it: `deno run <compile flags> src/main.ts`
 * where the process is what is proven (the exit code reaching the shell,
 * its stdout and stderr while serving, signals); the rest runs main()'s
 * start in process (`_in_process.ts`).
 */
import { match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  maskErrorLine,
  readHead,
  refusedPort,
  runCli,
  spawnGateway,
  startRawUpstream,
  startUpstream,
  TEST_BASE_DIR,
  waitFor,
  writeText,
} from "./_utils.ts";
import { runStartup, startMain } from "./_in_process.ts";
import { spawnGatewayWith } from "./_spawn_options.ts";

Deno.test("main() prints usage for --help and exits 0", async () => {
  // In process: main()'s stdout writer and exit 0 reaching the shell are the
  // SIGTERM test's process's (its listening line, its exit code).
  const { code, stdout } = await runStartup(["--help"]);
  strictEqual(code, 0);
  for (
    const flag of [
      "--listen",
      "--upstream",
      "--root",
      "--server-name",
      "--error-log",
      "--access-log",
      "--error-log-level",
      "--config",
      "--version",
    ]
  ) {
    match(stdout, new RegExp(flag));
  }
});

Deno.test("main() prints the version from deno.json", async () => {
  // In process: the exit code's way out is --help's, above.
  const { code, stdout } = await runStartup(["--version"]);
  strictEqual(code, 0);
  match(stdout, /^station-gateway \d+\.\d+\.\d+\n$/);
});

Deno.test("main() refuses bad flags with one line, the hint, and the [emerg] line in the log", async (t) => {
  const dir = await Deno.makeTempDir();
  const hint = 'station-gateway: see "station-gateway --help"\n';
  const cases: [string[], number, string][] = [
    [
      ["--lisen", "8081"],
      2,
      'unknown option "--lisen"; did you mean "--listen"?',
    ],
    [["--frobnicate"], 2, 'unknown option "--frobnicate"'],
    [["--listen"], 2, 'option "--listen" needs a value'],
    [["extra"], 2, 'unexpected argument "extra"'],
    [
      ["--upstream", "https://10.0.0.5"],
      1,
      'Cannot parse upstream "https://10.0.0.5": expected an http URL with a host, like http://127.0.0.1:8080',
    ],
    [
      ["--upstream", "http://"],
      1,
      'Cannot parse upstream "http://": expected an http URL with a host, like http://127.0.0.1:8080',
    ],
    [
      ["--upstream", "http://10.0.0.5/app"],
      1,
      'Cannot parse upstream "http://10.0.0.5/app": expected an http URL with a host, like http://127.0.0.1:8080',
    ],
    [
      ["--listen", "99999"],
      1,
      'Cannot parse listen "99999": port must be 0 to 65535',
    ],
    [
      ["--error-log-level", "loud"],
      1,
      'Cannot parse error-log-level "loud": expected one of emerg, alert, crit, error, warn, notice, info, debug',
    ],
  ];
  try {
    for (const [i, [args, expectedCode, message]] of cases.entries()) {
      await t.step(args.join(" "), async () => {
        const log = `${dir}/${i}/error.log`;
        // In process: the first case's exit code and lines reaching the
        // shell are the `deno task start` process's below.
        const { code, stdout, stderr } = await runStartup([
          ...args,
          "--error-log",
          log,
        ]);
        strictEqual(code, expectedCode, stderr);
        strictEqual(stderr, `station-gateway: [emerg] ${message}\n${hint}`);
        strictEqual(stdout, "", "nothing starts");
        strictEqual(
          maskErrorLine(await Deno.readTextFile(log)),
          `TIME [emerg] PID#TID: *N ${message}\n`,
        );
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() refuses a bad config file, naming the key and the file, in the log it names", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/gw.json`;
    const log = `${dir}/logs/error.log`;
    const keys =
      `the keys are the flags' names in camelCase ("--proxy-read-timeout" is "proxyReadTimeout")`;
    const json =
      'the config file is JSON: names and texts in double quotes, no comma after the last entry, no comments, e.g. {"upstream": "http://10.0.0.5", "proxyReadTimeout": "60s"}';
    const cases: [Record<string, unknown> | string, string, string][] = [
      [
        { upstrem: "http://10.0.0.5" },
        `unknown key "upstrem" in ${path}; did you mean "upstream"?`,
        keys,
      ],
      [
        { serverName: 8081 },
        `key "serverName" must be a string in ${path}`,
        keys,
      ],
      [
        { upstream: "ftp://x" },
        `Cannot parse upstream "ftp://x": expected an http URL with a host, like http://127.0.0.1:8080 in ${path}`,
        'see "station-gateway --help"',
      ],
      ["[]", `expected a JSON object in ${path}`, json],
    ];
    for (const [content, message, hint] of cases) {
      await t.step(message, async () => {
        const json = typeof content === "string"
          ? content
          : JSON.stringify({ errorLog: log, ...content });
        await Deno.writeTextFile(path, json);
        await Deno.remove(log).catch(() => {});
        // In process: a refused start's code leaves main() as the bad
        // flag's `deno task start` process below shows, and exit 1 reaches
        // the shell in the port-taken process below.
        const { code, stderr } = await runStartup([
          "--config",
          path,
          ...(typeof content === "string" ? ["--error-log", log] : []),
        ]);
        strictEqual(code, 1);
        strictEqual(
          stderr,
          `station-gateway: [emerg] ${message}\nstation-gateway: ${hint}\n`,
        );
        strictEqual(
          maskErrorLine(await Deno.readTextFile(log)),
          `TIME [emerg] PID#TID: *N ${message}\n`,
        );
      });
    }
    await t.step("not JSON", async () => {
      await Deno.writeTextFile(path, "{not json");
      const { code, stderr } = await runStartup(["--config", path]);
      strictEqual(code, 1);
      match(stderr, /^station-gateway: \[emerg\] invalid JSON in .*gw\.json: /);
    });
    await t.step("missing file: one message naming it once", async () => {
      const { code, stderr } = await runStartup([
        "--config",
        join(dir, "none.json"),
        "--error-log",
        log,
      ]);
      strictEqual(code, 1);
      const os = Deno.build.os === "windows"
        ? `CreateFile() "${dir}\\none.json" failed (2: The system cannot find the file specified)`
        : `open() "${dir}/none.json" failed (2: No such file or directory)`;
      strictEqual(stderr, `station-gateway: [emerg] ${os}\n`);
      match(
        await Deno.readTextFile(log),
        new RegExp(
          `\\[emerg\\] \\d+#\\d+: ${os.replace(/[()\\.]/g, "\\$&")}\\n$`,
        ),
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() writes a startup error to logs/error.log beside the program when no log is named", async () => {
  const marker = `--no-such-flag-${crypto.randomUUID().slice(0, 8)}`;
  // In process: TEST_BASE_DIR is the program's folder either way.
  const { code } = await runStartup([marker]);
  strictEqual(code, 2);
  const log = `${TEST_BASE_DIR}/logs/error.log`;
  match(
    await Deno.readTextFile(log),
    new RegExp(`\\[emerg\\] \\d+#\\d+: unknown option "${marker}"\\n`),
  );
  // The test's own folder, never the project's logs/.
  const project = new URL("../logs/error.log", import.meta.url);
  const text = await Deno.readTextFile(project).catch(() => "");
  strictEqual(text.includes(marker), false, "written into the project's logs/");
});

Deno.test("main() takes settings from --config and lets flags override them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/gw.json`,
      JSON.stringify({
        listen: "127.0.0.1:1",
        serverName: "station-7",
        errorLog: `${dir}/from-config.log`,
        accessLog: "off",
        upstream: `http://127.0.0.1:${refusedPort()}`,
      }),
    );
    await using gw = await startMain([
      "--config",
      `${dir}/gw.json`,
      "--listen",
      "127.0.0.1:0",
    ]);
    const res = await fetch(`http://127.0.0.1:${gw.port}/api/x`);
    await res.body?.cancel();
    strictEqual(res.status, 502);
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(`${dir}/from-config.log`).includes(
          "server: station-7",
        );
      } catch {
        return false;
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() fails to start with an [emerg] line when the port is taken", async () => {
  const dir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const { code, stderr, stdout } = await runCli([
      "--listen",
      `127.0.0.1:${taken.addr.port}`,
      "--error-log",
      `${dir}/error.log`,
      "--root",
      dir,
    ]);
    strictEqual(code, 1);
    strictEqual(stdout, "");
    const os = Deno.build.os === "windows"
      ? "10048: Only one usage of each socket address (protocol/network address/port) is normally permitted"
      : "98: Address already in use";
    strictEqual(
      stderr,
      `station-gateway: [emerg] bind() to 127.0.0.1:${taken.addr.port} failed (${os})\n`,
    );
    match(
      await Deno.readTextFile(`${dir}/error.log`),
      new RegExp(
        `^\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d \\[emerg\\] \\d+#\\d+: bind\\(\\) to 127\\.0\\.0\\.1:${taken.addr.port} failed \\(${
          os.replace(/[()/]/g, "\\$&")
        }\\)\\n$`,
      ),
    );
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "main() fails to start clearly when the log folder cannot be created",
  // Linux's text; log/log_folder_error_test.ts has both platforms'.
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/file`, "not a folder");
      const { code, stderr } = await runStartup([
        "--listen",
        "127.0.0.1:0",
        "--error-log",
        `${dir}/file/logs/error.log`,
      ]);
      strictEqual(code, 1);
      match(
        stderr,
        new RegExp(
          `^station-gateway: \\[emerg\\] open\\(\\) "${dir}/file/logs/error\\.log" failed \\(20: Not a directory\\)\\n$`,
        ),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/** The listening line of a gateway given a bare port: both loopbacks. */
const BOTH_LOOPBACKS =
  /listening on http:\/\/127\.0\.0\.1:\d+\/( and http:\/\/\[::1\]:\d+\/)?;/;

Deno.test(
  "main() listens on both loopbacks for a bare port, not on the LAN",
  // Where SIGTERM can be sent, the SIGTERM test's process below shows the
  // same line (a `deno run` less); Windows keeps a process of its own.
  { ignore: Deno.build.os !== "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await using gw = await spawnGateway([
        "--listen",
        "0",
        "--error-log",
        `${dir}/e.log`,
        "--access-log",
        "off",
        "--root",
        dir,
      ]);
      match(gw.output(), BOTH_LOOPBACKS);
      strictEqual(/0\.0\.0\.0/.test(gw.output()), false);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "main() serves a bare port on both loopbacks, not the LAN, and shuts down on SIGTERM: in-flight request finishes, logs flushed, exit 0",
  // Windows has no SIGTERM to send (windows_lane_test.ts listens to SIGBREAK).
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    const arrived = Promise.withResolvers<void>();
    // The answer waits until the gateway has logged the signal: the
    // request is in flight when the shutdown begins, however loaded the
    // machine (a 300 ms pause before could be over by then).
    const released = Promise.withResolvers<void>();
    const upstream = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen() {},
    }, async () => {
      arrived.resolve();
      await released.promise;
      return new Response("slow but whole");
    });
    try {
      const gw = await spawnGateway([
        // A bare port: the listening line names both loopbacks.
        "--listen",
        "0",
        "--upstream",
        `http://127.0.0.1:${upstream.addr.port}`,
        "--error-log",
        `${dir}/error.log`,
        "--access-log",
        `${dir}/access.log`,
        "--error-log-level",
        "notice",
      ]);
      match(gw.output(), BOTH_LOOPBACKS);
      strictEqual(/0\.0\.0\.0/.test(gw.output()), false, gw.output());
      const pending = fetch(`http://127.0.0.1:${gw.port}/api/slow`);
      // The signal meets a request in flight: sent once the upstream has it
      // (or the test ends with the fetch's failure).
      await Promise.race([arrived.promise, pending]);
      gw.child.kill("SIGTERM");
      await waitFor(() =>
        /signal 15 \(SIGTERM\) received/.test(
          Deno.readTextFileSync(`${dir}/error.log`),
        )
      );
      released.resolve();
      const res = await pending;
      strictEqual(await res.text(), "slow but whole");
      const status = await gw.child.status;
      strictEqual(status.code, 0);
      await gw[Symbol.asyncDispose]();
      const errorLog = await Deno.readTextFile(`${dir}/error.log`);
      // The start's line, which only the serving process writes.
      match(errorLog, /\[notice\] \d+#\d+: station-gateway\/\S+ started\n/);
      match(
        errorLog,
        /\[notice\] \d+#\d+: signal 15 \(SIGTERM\) received, exiting\n/,
      );
      match(errorLog, /\[notice\] \d+#\d+: exit\n$/);
      match(
        await Deno.readTextFile(`${dir}/access.log`),
        /"GET \/api\/slow HTTP\/1\.1" 200 14 /,
      );
    } finally {
      released.resolve();
      await upstream.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("main() --check passes a good configuration and says what it found", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { code, stderr, stdout } = await runStartup([
      "--check",
      "--listen",
      "127.0.0.1:0",
      "--error-log",
      `${dir}/logs/error.log`,
      "--root",
      `${dir}/missing-app`,
    ]);
    strictEqual(code, 0, stderr);
    strictEqual(stdout, "");
    match(
      stderr,
      /\[warn\] client app folder ".*missing-app" does not exist: the built-in page will be served at \//,
    );
    match(stderr, /\/api\/ goes to http:\/\/127\.0\.0\.1:8080\//);
    match(stderr, /configuration test is successful\n$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() --check fails with the reason: port taken, log not writable", async () => {
  const dir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await Deno.writeTextFile(`${dir}/file`, "");
    const { code, stderr } = await runStartup([
      "--check",
      "--listen",
      `127.0.0.1:${taken.addr.port}`,
      "--error-log",
      `${dir}/file/error.log`,
    ]);
    strictEqual(code, 1);
    match(
      stderr,
      new RegExp(
        `\\[emerg\\] bind\\(\\) to 127\\.0\\.0\\.1:${taken.addr.port} failed \\((98: Address already in use|10048: [^)]+)\\)`,
      ),
    );
    // CreateFile() and a backslash: nginx for Windows' name for open().
    match(
      stderr,
      /\[emerg\] (open|CreateFile)\(\) ".*file[\\/]error\.log" failed/,
    );
    match(stderr, /configuration test failed\n$/);
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "main() --check names the OS error nginx would: a file where the log folder should be",
  // Linux's text; log/log_folder_error_test.ts has both platforms'.
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/file`, "");
      const { code, stderr } = await runStartup([
        "--check",
        "--listen",
        "127.0.0.1:0",
        "--error-log",
        `${dir}/file/error.log`,
        "--access-log",
        "off",
      ]);
      strictEqual(code, 1);
      match(
        stderr,
        new RegExp(
          `^station-gateway: \\[emerg\\] open\\(\\) "${dir}/file/error\\.log" failed \\(20: Not a directory\\)\\n`,
        ),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("main() --check writes its [emerg] findings to the error log", async () => {
  const dir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const { code } = await runStartup([
      "--check",
      "--listen",
      `127.0.0.1:${taken.addr.port}`,
      "--error-log",
      `${dir}/error.log`,
      "--access-log",
      "off",
    ]);
    strictEqual(code, 1);
    match(
      await Deno.readTextFile(`${dir}/error.log`),
      new RegExp(
        `^\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d \\[emerg\\] \\d+#\\d+: bind\\(\\) to 127\\.0\\.0\\.1:${taken.addr.port} failed \\((98: Address already in use|10048: Only one usage of each socket address \\(protocol/network address/port\\) is normally permitted)\\)\\n$`,
      ),
    );
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() --check says whether each upstream answers now, as a warning only", async () => {
  const dir = await Deno.makeTempDir();
  await using up = startUpstream();
  const down = refusedPort();
  try {
    const { code, stderr } = await runStartup([
      "--check",
      "--listen",
      "127.0.0.1:0",
      "--error-log",
      `${dir}/error.log`,
      "--upstream",
      up.origin,
      "--upstream",
      `http://127.0.0.1:${down} backup`,
    ]);
    strictEqual(code, 0, stderr);
    match(
      stderr,
      new RegExp(
        `\\nstation-gateway: upstream ${up.origin}/ answers \\(HTTP 200\\)\\n`,
      ),
    );
    const refused = Deno.build.os === "windows"
      ? "10061: No connection could be made because the target machine actively refused it"
      : "111: Connection refused";
    match(
      stderr,
      new RegExp(
        `\\nstation-gateway: \\[warn\\] upstream http://127\\.0\\.0\\.1:${down}/ does not answer now: connect\\(\\) failed \\(${refused}\\); /api/ gets 502 until it does\\n`,
      ),
    );
    match(stderr, /configuration test is successful\n$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() --check binds what the gateway binds: both loopbacks for a bare port", async (t) => {
  let v6: Deno.TcpListener;
  try {
    v6 = Deno.listen({ hostname: "::1", port: 0 });
  } catch {
    await t.step("no IPv6 loopback here", () => {});
    return;
  }
  const dir = await Deno.makeTempDir();
  try {
    const { code, stderr } = await runStartup([
      "--check",
      "--listen",
      String(v6.addr.port),
      "--error-log",
      `${dir}/error.log`,
    ]);
    strictEqual(code, 1, stderr);
    match(
      stderr,
      new RegExp(`\\[emerg\\] bind\\(\\) to \\[::1\\]:${v6.addr.port} failed`),
    );
  } finally {
    v6.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task start needs no network, and a bad flag's exit code 2 and lines reach the shell", async () => {
  // A fresh, empty Deno cache and every registry and proxy pointing at a
  // closed port: anything fetched before the gateway runs fails the start
  // (the lock holds nothing the gateway does not use; every module is
  // loaded before main() reads a flag). A bad flag: the refusal through
  // main()'s stderr writer and its exit code, as the program, not startup()
  // in process, gives them (the bad flags' table above).
  const cache = await Deno.makeTempDir();
  const dir = await Deno.makeTempDir();
  const log = `${dir}/logs/error.log`;
  const closed = `http://127.0.0.1:${refusedPort()}/`;
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "start", "--lisen", "8081", "--error-log", log],
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: {
        DENO_DIR: cache,
        NPM_CONFIG_REGISTRY: closed,
        JSR_URL: closed,
        HTTP_PROXY: closed,
        HTTPS_PROXY: closed,
        NO_PROXY: "",
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const message = 'unknown option "--lisen"; did you mean "--listen"?';
    // Nothing but the refusal: no download was tried.
    strictEqual(
      new TextDecoder().decode(out.stderr),
      `station-gateway: [emerg] ${message}\n` +
        'station-gateway: see "station-gateway --help"\n',
    );
    strictEqual(out.code, 2);
    strictEqual(new TextDecoder().decode(out.stdout), "");
    strictEqual(
      maskErrorLine(await Deno.readTextFile(log)),
      `TIME [emerg] PID#TID: *N ${message}\n`,
    );
  } finally {
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main() --check refuses a bad config file with the same [emerg] line in the log", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/gw.json`;
    await Deno.writeTextFile(
      path,
      JSON.stringify({ errorLog: `${dir}/error.log`, upstrem: "http://x" }),
    );
    const { code, stderr } = await runStartup(["--check", "--config", path]);
    strictEqual(code, 1);
    const message =
      `unknown key "upstrem" in ${path}; did you mean "upstream"?`;
    match(
      stderr,
      new RegExp(
        `^station-gateway: \\[emerg\\] ${
          message.replace(/[.?\\]/g, "\\$&")
        }\\n`,
      ),
    );
    strictEqual(
      maskErrorLine(await Deno.readTextFile(`${dir}/error.log`)),
      `TIME [emerg] PID#TID: *N ${message}\n`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "main() logs every request it gives up on when the shutdown grace ends",
  // Windows has no SIGTERM to send.
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    // /silent never hears back; /stall gets its head and 5 body bytes.
    await using upstream = startRawUpstream(async (conn) => {
      const head = await readHead(conn);
      if (head?.startsWith("GET /stall ")) {
        await writeText(
          conn,
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        );
      }
      // Holds the connection until the gateway goes away.
      const buf = new Uint8Array(1024);
      while (await conn.read(buf).catch(() => null) !== null);
    });
    try {
      const gw = await spawnGatewayWith({ shutdownGraceMs: 300 }, [
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        upstream.origin,
        "--root",
        dir,
        "--error-log",
        `${dir}/error.log`,
        "--access-log",
        `${dir}/access.log`,
        "--error-log-level",
        "notice",
      ]);
      const base = `http://127.0.0.1:${gw.port}`;
      const silent = fetch(`${base}/api/silent`).then(
        (r) => r.status,
        () => "no answer",
      );
      const stalled = await fetch(`${base}/api/stall`);
      const reader = stalled.body!.getReader();
      strictEqual(
        new TextDecoder().decode((await reader.read()).value),
        "hello",
      );
      await waitFor(() => upstream.connections === 2, 5000);
      const sent = Date.now();
      gw.child.kill("SIGTERM");
      strictEqual((await gw.child.status).code, 0);
      const took = Date.now() - sent;
      await gw[Symbol.asyncDispose]();
      strictEqual(await silent, "no answer");
      await reader.read().then(() => reader.cancel(), () => {});
      const access = await Deno.readTextFile(`${dir}/access.log`);
      match(access, /"GET \/api\/silent HTTP\/1\.1" 000 0 "-" "Deno\/[^"]+"\n/);
      // The client got one chunk, framing included as nginx counts it:
      // "5\r\nhello\r\n".
      match(access, /"GET \/api\/stall HTTP\/1\.1" 200 10 "-" "Deno\/[^"]+"\n/);
      strictEqual(access.split("\n").length, 3, access);
      match(String(took), /^\d{1,4}$/, `exit took ${took} ms`);
      const errors = await Deno.readTextFile(`${dir}/error.log`);
      match(
        errors,
        /\[warn\] \d+#\d+: in-flight requests still open after 300 ms, exiting\n/,
      );
      strictEqual(/\[(error|crit|alert|emerg)\]/.test(errors), false, errors);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("main() logs an upstream failing mid-body once, with no [alert] besides", async () => {
  const dir = await Deno.makeTempDir();
  // A head promising 100 bytes, 5 of them, then silence.
  await using upstream = startRawUpstream(async (conn) => {
    await readHead(conn);
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello",
    );
    const buf = new Uint8Array(1024);
    while (await conn.read(buf).catch(() => null) !== null);
  });
  try {
    // In process: the lines come from the serving gateway's handlers, which
    // startMain() starts as main() does.
    await using gw = await startMain([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      upstream.origin,
      // Between two reads, so also the upstream's head after the request:
      // at 300 ms a loaded machine's upstream (in this process) answered
      // late, and the line said "while reading response header".
      "--proxy-read-timeout",
      "2s",
      "--root",
      dir,
      "--error-log",
      `${dir}/error.log`,
      "--access-log",
      `${dir}/access.log`,
    ]);
    const res = await fetch(`http://127.0.0.1:${gw.port}/api/partial`);
    await res.text().catch(() => {});
    const log = () => Deno.readTextFileSync(`${dir}/error.log`);
    // The access line is the request's last: every error line is written
    // by then.
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(`${dir}/access.log`).includes("/api/");
      } catch {
        return false;
      }
    }, 10_000);
    const lines = log().trimEnd().split("\n");
    strictEqual(lines.length, 1, log());
    match(
      lines[0]!,
      /\[error\] \d+#\d+: \*\d+ upstream timed out \((110|10060): [^)]+\) while reading upstream, /,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
