/** The interface spec's case: the upstream refuses the connection. */
import { match, strictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  refusedPort,
  startGateway,
  waitFor,
} from "./_utils.ts";
import { startMain } from "./_in_process.ts";

const REFUSED_RE = Deno.build.os === "windows"
  ? "10061: No connection could be made because the target machine actively refused it"
  : "111: Connection refused";

function specPost(path: string, port: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost:${port}\r\n` +
    `Referer: http://localhost:${port}/\r\nContent-Type: application/json\r\n` +
    `Content-Length: 2\r\nConnection: close\r\n\r\n{}`;
}

Deno.test("refused upstream gives 502 and exactly the spec's line per attempt", async () => {
  const dead = refusedPort();
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
  });
  const paths = ["/api/loginms", "/api/Home31/UpDateTitle", "/api/loginms"];
  for (const path of paths) {
    const res = await rawRequest(gw.port, specPost(path, gw.port));
    match(res, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    match(res, /content-type: text\/html/i);
    match(res, /<center><h1>502 Bad Gateway<\/h1><\/center>/);
  }
  const errors = gw.errorLines.filter((l) => l.includes("[error]"));
  strictEqual(errors.length, paths.length, "one line per attempt, no retry");
  const os = Deno.build.os === "windows"
    ? "10061: No connection could be made because the target machine actively refused it"
    : "111: Connection refused";
  errors.forEach((line, i) => {
    const path = paths[i]!;
    strictEqual(
      maskErrorLine(line),
      `TIME [error] PID#TID: *N connect() failed (${os}) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST ${path} HTTP/1.1", upstream: "http://127.0.0.1:${dead}${
        path.slice(4)
      }", host: "localhost:${gw.port}", referrer: "http://localhost:${gw.port}/"`,
    );
  });
  await waitFor(() => gw.accessLines.length === paths.length);
  for (const line of gw.accessLines) {
    match(line, /" 502 \d+ "http:\/\/localhost:\d+\/"/);
  }
});

Deno.test("refused upstream line omits the referrer the client did not send", async () => {
  const dead = refusedPort();
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
  });
  // Without a Host a request is refused before routing (Deno.serve does
  // not tell HTTP/1.0 from HTTP/1.1, and HTTP/1.1 requires one).
  await rawRequest(
    gw.port,
    "POST /api/loginms HTTP/1.0\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
  );
  strictEqual(gw.errorLines.length, 1);
  match(
    gw.errorLines[0]!,
    /upstream: "http:\/\/127\.0\.0\.1:\d+\/loginms", host: "h"$/,
  );
});

Deno.test("main.ts writes the spec's line to the error log file and counts connections like nginx", async () => {
  const dir = await Deno.makeTempDir();
  const dead = refusedPort();
  try {
    // In process: the file's line and the connection numbers are what is
    // proved, and startMain() configures them as main() does.
    await using gw = await startMain([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      `http://127.0.0.1:${dead}`,
      "--error-log",
      `${dir}/logs/error.log`,
      "--access-log",
      `${dir}/logs/access.log`,
      "--root",
      `${dir}/html`,
    ]);
    // Two requests on one keep-alive connection, then one on a new one.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    const post = (path: string, close: boolean) =>
      specPost(path, gw.port).replace(
        "Connection: close",
        close ? "Connection: close" : "Connection: keep-alive",
      );
    await conn.write(new TextEncoder().encode(post("/api/loginms", false)));
    const buf = new Uint8Array(4096);
    await conn.read(buf);
    await conn.write(
      new TextEncoder().encode(post("/api/Home31/UpDateTitle", true)),
    );
    while ((await conn.read(buf)) !== null) { /* drain */ }
    conn.close();
    await rawRequest(gw.port, specPost("/api/loginms", gw.port));
    const log = `${dir}/logs/error.log`;
    await waitFor(() => Deno.readTextFileSync(log).split("\n").length > 3);
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    strictEqual(lines.length, 3);
    const numbers = lines.map((l) => Number(l.match(/: \*(\d+) /)![1]));
    // Same connection keeps its number; every upstream attempt uses one up.
    strictEqual(numbers[0], numbers[1]);
    strictEqual(numbers[2], numbers[0]! + 3);
    match(
      lines[0]!,
      new RegExp(
        `^\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d \\[error\\] ${Deno.pid}#\\d+: \\*\\d+ connect\\(\\) failed \\(${REFUSED_RE}\\) while connecting to upstream, client: 127\\.0\\.0\\.1, server: localhost, request: "POST /api/loginms HTTP/1\\.1", upstream: "http://127\\.0\\.0\\.1:${dead}/loginms", host: "localhost:${gw.port}", referrer: "http://localhost:${gw.port}/"$`,
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
