/** Load and hostile input, loopback only, bounded in count and time. */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  refusedPort,
  startGateway,
  startRawUpstream,
  writeText,
} from "./_utils.ts";
import { startMain } from "./_in_process.ts";

const REFUSED = Deno.build.os === "windows" ? "10061" : "111";

/**
 * A bound for a gateway that never answers, not a time a request should
 * take: a client that gives up first gets no line, and a loaded machine (or
 * the Windows lane's Wine, which accepts a connection in tens of
 * milliseconds) takes most of a minute for 1,000 at once.
 */
const BURST_TIMEOUT_MS = 180_000;

/** Sends `n` POSTs at once, each on its own connection, tagged ?n=i. */
async function burst(port: number, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, (_, i) =>
    rawRequest(
      port,
      `POST /api/loginms?n=${i} HTTP/1.1\r\nHost: localhost:8081\r\nReferer: http://localhost:8081/\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      BURST_TIMEOUT_MS,
    )));
}

function checkLines(lines: string[], n: number, dead: number): void {
  const line = new RegExp(
    `^\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d \\[error\\] \\d+#\\d+: \\*\\d+ connect\\(\\) failed \\(${REFUSED}: [^)]+\\) while connecting to upstream, client: 127\\.0\\.0\\.1, server: localhost, request: "POST /api/loginms\\?n=(\\d+) HTTP/1\\.1", upstream: "http://127\\.0\\.0\\.1:${dead}/loginms\\?n=\\1", host: "localhost:8081", referrer: "http://localhost:8081/"$`,
  );
  strictEqual(lines.length, n);
  const seen = new Set<number>();
  for (const l of lines) {
    const m = l.match(line);
    if (!m) {
      throw new Error(`malformed or interleaved line: ${JSON.stringify(l)}`);
    }
    seen.add(Number(m[1]));
  }
  strictEqual(seen.size, n, "every request's line exactly once");
}

/** Every line of the files whose names start with `name` in `dir`. */
async function rotatedLines(
  dir: string,
  name: string,
): Promise<{ files: number; lines: string[] }> {
  const files = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name)
    .filter((n) => n.startsWith(name));
  const lines: string[] = [];
  for (const f of files) {
    const text = await Deno.readTextFile(`${dir}/${f}`);
    strictEqual(text.endsWith("\n"), true, `${f} ends with a whole line`);
    strictEqual(text.length <= 16 * 1024, true, `${f} is within the size`);
    lines.push(...text.split("\n").filter((l) => l !== ""));
  }
  return { files: files.length, lines };
}

// One burst proves both: the lines whole and each once (as without a
// rotation: the writer is the same, 16m by default, rotating or not) and
// none lost or split while both logs rotate. Two bursts, one rotating and
// one not, cost a gateway process and 1,000 requests more.
Deno.test("1,000 concurrent requests against a refused upstream while the logs rotate: 1,000 whole lines, nothing lost or split", async () => {
  const dir = await Deno.makeTempDir();
  const dead = refusedPort();
  try {
    await using gw = await startMain([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      `http://127.0.0.1:${dead}`,
      "--error-log",
      `${dir}/error.log`,
      "--access-log",
      `${dir}/access.log`,
      "--log-max-size",
      "16k",
      "--log-keep",
      "1000",
    ]);
    await burst(gw.port, 1000);
    const errors = await rotatedLines(dir, "error.log");
    ok(errors.files > 10, `rotated into ${errors.files} files`);
    checkLines(errors.lines, 1000, dead);
    const access = await rotatedLines(dir, "access.log");
    ok(access.files > 5, `rotated into ${access.files} files`);
    strictEqual(access.lines.length, 1000);
    strictEqual(
      new Set(access.lines.map((l) => l.match(/\?n=(\d+) /)?.[1])).size,
      1000,
      "every request's access line exactly once",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hostile requests get a 4xx, reach nothing upstream, and the gateway keeps serving", async (t) => {
  await using up = startRawUpstream(async (conn, _i, self) => {
    const head = await readHead(conn);
    if (head) self.heads.push(head);
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
  await using gw = await startGateway({ upstreamUrl: up.origin });
  const cases: [string, string][] = [
    [
      "Content-Length with Transfer-Encoding (smuggling)",
      "POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
    ],
    [
      "two different Content-Length",
      "POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 20\r\n\r\nab",
    ],
    [
      "malformed Content-Length",
      "POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\nab",
    ],
    [
      "obs-fold header",
      "GET /api/x HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n two\r\n\r\n",
    ],
    [
      "bare CR in a header value",
      "GET /api/x HTTP/1.1\r\nHost: a\r\nX-Bad: a\rb\r\n\r\n",
    ],
    [
      "request line too long",
      `GET /api/${"a".repeat(200_000)} HTTP/1.1\r\nHost: a\r\n\r\n`,
    ],
    [
      "headers too large",
      `GET /api/x HTTP/1.1\r\nHost: a\r\nX-Big: ${"b".repeat(200_000)}\r\n\r\n`,
    ],
    ["invalid method", "G<T /api/x HTTP/1.1\r\nHost: a\r\n\r\n"],
    ["invalid target", "GET api/x HTTP/1.1\r\nHost: a\r\n\r\n"],
    ["invalid version", "GET /api/x HTTP/9.9\r\nHost: a\r\n\r\n"],
    ["invalid Host", "GET /api/x HTTP/1.1\r\nHost: a b\r\n\r\n"],
    [
      "path above the root",
      "GET /api/../../etc/passwd HTTP/1.1\r\nHost: a\r\n\r\n",
    ],
  ];
  for (const [name, raw] of cases) {
    await t.step(name, async () => {
      const res = await rawRequest(gw.port, raw);
      match(res, /^HTTP\/1\.1 4\d\d /, JSON.stringify(res.slice(0, 80)));
    });
  }
  deepStrictEqual(up.heads, [], "the upstream saw none of them");
  match(
    await rawRequest(
      gw.port,
      "GET /api/ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    ),
    /^HTTP\/1\.1 200 /,
  );
});

Deno.test("status endpoint: JSON counters for loopback clients, off by default", async () => {
  const dead = refusedPort();
  await using off = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
  });
  const none = await fetch(`${off.url}/__status`);
  await none.body?.cancel();
  strictEqual(
    none.headers.get("content-type")?.includes("json") ?? false,
    false,
  );

  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
    statusPath: "/__status",
  });
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${gw.url}/api/x`, { method: "POST", body: "{}" });
    await r.body?.cancel();
  }
  const res = await fetch(`${gw.url}/__status`);
  strictEqual(res.headers.get("cache-control"), "no-store");
  const doc = await res.json();
  strictEqual(doc.requests.total, 4);
  strictEqual(doc.requests.inFlight, 1, "the status request itself");
  strictEqual(doc.requests.byStatus["5xx"], 3);
  strictEqual(doc.upstream.failures.refused, 3);
  deepStrictEqual(
    doc.upstream.servers.map((s: { server: string }) => s.server),
    [`127.0.0.1:${dead}`],
  );
  strictEqual(typeof doc.uptimeSeconds, "number");
  strictEqual(doc.memory.rssBytes > 10_000_000, true, "a real RSS");
  strictEqual(doc.memory.heapUsedBytes <= doc.memory.heapTotalBytes, true);
});
