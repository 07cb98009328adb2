/**
 * Windows code paths. Runs everywhere; under the Windows deno.exe (Wine,
 * scripts/wine_test.sh) the Windows branches really run: Winsock codes,
 * Windows paths, SIGBREAK. Assertions are on codes, never on Wine's message
 * texts, which differ from Windows'.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join, relative } from "node:path";
import { resolveConfig } from "../src/config/config.ts";
import { parseTaskArgs, runTask } from "../src/windows/task_command.ts";
import { upstreamErrorFromOs } from "../src/upstream/error.ts";
import { at, parseXml } from "./_xml.ts";
import {
  GATEWAY_FLAGS,
  MAIN,
  maskErrorLine,
  rawRequest,
  refusedPort,
  runCli,
  startGateway,
} from "./_utils.ts";
import { startMain } from "./_in_process.ts";

const WINDOWS = Deno.build.os === "windows";

Deno.test("a real refused connect gives the spec's line on this platform", async () => {
  // Deno.connect's own error: (os error 10061) on Windows, 111 on Linux.
  const dead = refusedPort();
  const thrown = await Deno.connect({ hostname: "127.0.0.1", port: dead }).then(
    (c) => (c.close(), null),
    (e: unknown) => e,
  );
  const e = upstreamErrorFromOs(thrown, "connecting to upstream");
  strictEqual(e.osError?.code, WINDOWS ? 10061 : 111);

  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
  });
  await rawRequest(
    gw.port,
    "POST /api/loginms HTTP/1.1\r\nHost: localhost:8081\r\nReferer: http://localhost:8081/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
  );
  const os = WINDOWS
    ? "10061: No connection could be made because the target machine actively refused it"
    : "111: Connection refused";
  deepStrictEqual(gw.errorLines.map(maskErrorLine), [
    `TIME [error] PID#TID: *N connect() failed (${os}) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:${dead}/loginms", host: "localhost:8081", referrer: "http://localhost:8081/"`,
  ]);
});

/** The interface spec's contract line (section 7), as the station logs it. */
const SPEC_LINE =
  '2024/01/15 10:23:45 [error] 1234#5678: *12 connect() failed (10061: No connection could be made because the target machine actively refused it) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:8080/loginms", host: "localhost:8081", referrer: "http://localhost:8081/"';

/** Whether nothing listens on 127.0.0.1:8080, the spec's upstream port. */
const port8080Refused = await Deno.connect({
  hostname: "127.0.0.1",
  port: 8080,
}).then((c) => (c.close(), false), () => true);

Deno.test({
  name:
    "the interface spec's line, byte for byte, from a real refused connect to 127.0.0.1:8080",
  // The spec's upstream port: a station app already listening there on the
  // test machine cannot refuse.
  ignore: !port8080Refused,
}, async () => {
  await using gw = await startGateway({ upstreamUrl: "http://127.0.0.1:8080" });
  await rawRequest(
    gw.port,
    "POST /api/loginms HTTP/1.1\r\nHost: localhost:8081\r\nReferer: http://localhost:8081/\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
  );
  // Only the time, pid#tid and *N are masked; on Linux the OS part is
  // nginx's Linux text, everything else is the spec's bytes.
  const expected = WINDOWS ? SPEC_LINE : SPEC_LINE.replace(
    "10061: No connection could be made because the target machine actively refused it",
    "111: Connection refused",
  );
  deepStrictEqual(gw.errorLines.map(maskErrorLine), [maskErrorLine(expected)]);
});

Deno.test("static serving refuses Windows path tricks", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "html", "app"), { recursive: true });
    await Deno.writeTextFile(join(dir, "html", "index.html"), "app");
    await Deno.writeTextFile(join(dir, "secret.txt"), "outside the root");
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
      spaFallback: false, // containment only: a missing name must be a 404
    });
    const drive = dir.match(/^[A-Za-z]:/)?.[0] ?? "C:";
    const attempts = [
      "/..\\secret.txt",
      "/app\\..\\..\\secret.txt",
      "/%5c..%5csecret.txt",
      `/${drive}/Windows/win.ini`,
      `/${drive}%5cWindows%5cwin.ini`,
      "/index.html::$DATA",
      "/index.html:stream",
      "/index.html.",
      "/index.html%20",
      "/INDEX~1.HTM",
      "/index.html%00",
      "/con",
    ];
    for (const target of attempts) {
      await t.step(target, async () => {
        const res = await rawRequest(
          gw.port,
          `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        );
        match(res, /^HTTP\/1\.1 (400|404) /);
        strictEqual(res.includes("outside the root"), false);
      });
    }
    match(
      await rawRequest(
        gw.port,
        "GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
      ),
      /\r\n\r\napp$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task install --dry-run registers this executable's folder as the working directory", async () => {
  const out: string[] = [];
  const exe = Deno.execPath();
  const code = await runTask(
    parseTaskArgs(["install", "--dry-run", "--executable", exe]),
    {
      execPath: exe,
      os: Deno.build.os,
      version: "test",
    },
    {
      out: (t) => void out.push(t),
      schtasks: () => Promise.resolve(1),
      writeFile() {},
    },
  );
  strictEqual(code, 0);
  const xml = out.join("").slice(out.join("").indexOf("<?xml"));
  const exec = at(parseXml(xml), "Actions/Exec");
  // Elsewhere the path is read as a Windows one on drive C: (a dry run).
  strictEqual(
    at(exec, "Command").text,
    WINDOWS ? exe : `C:${exe.replaceAll("/", "\\")}`,
  );
  if (WINDOWS) {
    strictEqual(
      at(exec, "WorkingDirectory").text,
      exe.slice(0, exe.lastIndexOf("\\")),
    );
  }
});

Deno.test("the shutdown signals of this platform can be listened to", () => {
  const signals: Deno.Signal[] = WINDOWS
    ? ["SIGINT", "SIGBREAK"]
    : ["SIGINT", "SIGTERM"];
  for (const signal of signals) {
    const listener = () => {};
    Deno.addSignalListener(signal, listener);
    Deno.removeSignalListener(signal, listener);
  }
});

Deno.test("relative paths start from the base folder, Windows paths included", () => {
  if (WINDOWS) {
    const c = resolveConfig(
      {},
      { root: "app", errorLog: "logs\\error.log" },
      "C:\\Station Gateway",
    );
    strictEqual(c.root, "C:\\Station Gateway\\app");
    strictEqual(c.errorLog, "C:\\Station Gateway\\logs\\error.log");
    strictEqual(c.accessLog, "C:\\Station Gateway\\logs\\access.log");
    strictEqual(
      resolveConfig({}, { errorLog: "D:\\logs\\e.log" }, "C:\\S").errorLog,
      "D:\\logs\\e.log",
    );
  } else {
    strictEqual(
      resolveConfig({}, { root: "app" }, "/opt/station").root,
      "/opt/station/app",
    );
  }
});

Deno.test("main.ts resolves relative log paths from its own folder, not the working directory", async () => {
  // src/main.ts itself (runCli sets a test folder as the gateway's), with a
  // relative path from the project folder to a temporary one: the log lands
  // there only if the path starts at the project, and the project's own
  // logs/ is never written.
  const project = decodeURIComponent(
    new URL("..", import.meta.url).pathname.replace(/^\/([A-Za-z]:)/, "$1"),
  );
  const target = await Deno.makeTempDir();
  const elsewhere = await Deno.makeTempDir();
  const expected = join(target, "lane.log");
  try {
    // Deeper than the project, so from here the `..`s would end elsewhere.
    const deep = join(elsewhere, "a", "b", "c", "d", "e", "f");
    await Deno.mkdir(deep, { recursive: true });
    // The child's working directory, never the test process's: Deno.chdir
    // would move every suite running in parallel with this one, and a
    // program they start there fails once the folder is removed.
    const out = await new Deno.Command(Deno.execPath(), {
      cwd: deep,
      args: [
        "run",
        "-q",
        ...GATEWAY_FLAGS,
        MAIN,
        "--check",
        "--listen",
        "127.0.0.1:0",
        "--root",
        target,
        "--error-log",
        relative(project, expected),
        "--access-log",
        "off",
      ],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    strictEqual(out.code, 0, stderr);
    strictEqual((await Deno.stat(expected)).isFile, true, stderr);
  } finally {
    await Deno.remove(target, { recursive: true });
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("a second gateway on the same port fails to start with the platform's code", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // The first in process: only the second's exit code needs a process.
    await using first = await startMain([
      "--listen",
      "127.0.0.1:0",
      "--error-log",
      join(dir, "a.log"),
      "--access-log",
      "off",
    ]);
    const second = await runCli([
      "--listen",
      `127.0.0.1:${first.port}`,
      "--error-log",
      join(dir, "b.log"),
      "--access-log",
      "off",
    ]);
    strictEqual(second.code, 1);
    match(
      second.stderr,
      new RegExp(
        `\\[emerg\\] bind\\(\\) to 127\\.0\\.0\\.1:${first.port} failed \\(${
          WINDOWS ? "10048" : "98"
        }: `,
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
