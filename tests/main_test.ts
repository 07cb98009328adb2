/** The program as a station runs it: `deno run <compile flags> src/main.ts`. */
import { match, strictEqual } from "node:assert/strict";
import {
  readHead,
  refusedPort,
  runCli,
  spawnGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "./_utils.ts";
import { spawnGatewayWith } from "./_spawn_options.ts";

Deno.test("main() prints usage for --help and exits 0", async () => {
  const { code, stdout } = await runCli(["--help"]);
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
  const { code, stdout } = await runCli(["--version"]);
  strictEqual(code, 0);
  match(stdout, /^station-gateway \d+\.\d+\.\d+\n$/);
});

Deno.test("main() refuses bad flags with one clear message and usage", async (t) => {
  const cases: [string[], number, RegExp][] = [
    [
      ["--lisen", "8081"],
      2,
      /^station-gateway: Unknown option "--lisen"\n\nstation-gateway: serves/,
    ],
    [["--listen"], 2, /^station-gateway: Option "--listen" needs a value\n/],
    [["extra"], 2, /^station-gateway: Unexpected argument "extra"\n/],
    [
      ["--upstream", "https://10.0.0.5"],
      1,
      /^station-gateway: Cannot parse upstream "https:\/\/10\.0\.0\.5": expected an http URL with a host/,
    ],
    [["--upstream", "http://"], 1, /Cannot parse upstream "http:\/\/"/],
    [
      ["--upstream", "http://10.0.0.5/app"],
      1,
      /Cannot parse upstream "http:\/\/10\.0\.0\.5\/app"/,
    ],
    [
      ["--upstream", "127.0.0.1:8080"],
      1,
      /Cannot parse upstream "127\.0\.0\.1:8080"/,
    ],
    [
      ["--listen", "99999"],
      1,
      /Cannot parse listen "99999": port must be 0 to 65535/,
    ],
    [["--listen", "a b:1"], 1, /Cannot parse listen "a b:1"/],
    [
      ["--error-log-level", "loud"],
      1,
      /Cannot parse error-log-level "loud": expected one of emerg, alert/,
    ],
    [["--log-max-size", "lots"], 1, /Cannot parse log-max-size "lots"/],
  ];
  for (const [args, expectedCode, message] of cases) {
    await t.step(args.join(" "), async () => {
      const { code, stdout, stderr } = await runCli(args);
      strictEqual(code, expectedCode, stderr);
      match(stderr, message);
      match(stderr, /USAGE:/);
      strictEqual(stdout, "", "nothing starts");
    });
  }
});

Deno.test("main() refuses a bad config file, naming the key", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string, RegExp][] = [
      ['{"listn": "8081"}', /unknown key "listn"/],
      ['{"listen": 8081}', /key "listen" must be a string/],
      ['{"upstream": "ftp://x"}', /Cannot parse upstream "ftp:\/\/x"/],
      ["{not json", /Cannot parse config file ".*gw\.json": /],
      ["[]", /expected a JSON object/],
    ];
    for (const [text, message] of cases) {
      await t.step(text, async () => {
        await Deno.writeTextFile(`${dir}/gw.json`, text);
        const { code, stderr } = await runCli(["--config", `${dir}/gw.json`]);
        strictEqual(code, 1);
        match(stderr, message);
      });
    }
    await t.step("missing file", async () => {
      const { code, stderr } = await runCli(["--config", `${dir}/none.json`]);
      strictEqual(code, 1);
      match(stderr, /Cannot read config file ".*none\.json"/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
    await using gw = await spawnGateway([
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
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/file`, "not a folder");
      const { code, stderr } = await runCli([
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

Deno.test("main() listens on both loopbacks for a bare port, not on the LAN", async () => {
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
    match(
      gw.output(),
      /listening on http:\/\/127\.0\.0\.1:\d+\/( and http:\/\/\[::1\]:\d+\/)?;/,
    );
    strictEqual(/0\.0\.0\.0/.test(gw.output()), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "main() shuts down on SIGTERM: in-flight request finishes, logs flushed, exit 0",
  { ignore: Deno.build.os === "windows" },
  async () => {
    const dir = await Deno.makeTempDir();
    const upstream = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen() {},
    }, async () => {
      await new Promise((r) => setTimeout(r, 300));
      return new Response("slow but whole");
    });
    try {
      const gw = await spawnGateway([
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        `http://127.0.0.1:${upstream.addr.port}`,
        "--error-log",
        `${dir}/error.log`,
        "--access-log",
        `${dir}/access.log`,
        "--error-log-level",
        "notice",
      ]);
      const pending = fetch(`http://127.0.0.1:${gw.port}/api/slow`);
      await new Promise((r) => setTimeout(r, 100));
      gw.child.kill("SIGTERM");
      const res = await pending;
      strictEqual(await res.text(), "slow but whole");
      const status = await gw.child.status;
      strictEqual(status.code, 0);
      await gw[Symbol.asyncDispose]();
      const errorLog = await Deno.readTextFile(`${dir}/error.log`);
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
      await upstream.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("main() --check passes a good configuration and says what it found", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { code, stderr, stdout } = await runCli([
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
    const { code, stderr } = await runCli([
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
    match(stderr, /\[emerg\] open\(\) ".*file\/error\.log" failed/);
    match(stderr, /configuration test failed\n$/);
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "main() logs every request it gives up on when the shutdown grace ends",
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
      match(access, /"GET \/api\/stall HTTP\/1\.1" 200 5 "-" "Deno\/[^"]+"\n/);
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
    await using gw = await spawnGateway([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      upstream.origin,
      "--proxy-read-timeout",
      "300ms",
      "--root",
      dir,
      "--error-log",
      `${dir}/error.log`,
    ]);
    const res = await fetch(`http://127.0.0.1:${gw.port}/api/partial`);
    await res.text().catch(() => {});
    const log = () => Deno.readTextFileSync(`${dir}/error.log`);
    await waitFor(() => log().includes("upstream timed out"), 5000);
    await new Promise((r) => setTimeout(r, 200));
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
