/**
 * TLS end to end, beside nginx 1.22 with the same configuration: the
 * common pair (port 80 answering `return 301 https://…`, the app on a
 * `listen … ssl` port) followed by clients that trust the test's own
 * self-signed certificate, HTTP/2 by ALPN, and plain HTTP sent to the TLS
 * port. `tls_start_test.ts` has the start's failures.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort, rawRequest, waitFor } from "./_utils.ts";
import { startMain } from "./_in_process.ts";
import { nginxBinary, stopNginx } from "./_nginx.ts";
import {
  commonPair,
  follow,
  type Prefix,
  prefixesAhead,
  prefixWith,
} from "./_tls.ts";

// Each test's prefix, written now: its folders have settled when it runs.
prefixesAhead(8);

/** Runs nginx on a prefix until disposed. */
async function runNginx(p: Prefix): Promise<AsyncDisposable> {
  const pid = join(p.dir, "logs", "nginx.pid");
  const child = new Deno.Command(await nginxBinary(), {
    args: [
      "-p",
      `${p.dir}/`,
      "-c",
      p.conf,
      "-e",
      join(p.dir, "logs", "error.log"),
      "-g",
      `daemon off; master_process off; pid ${pid};`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitFor(() => {
    try {
      return Deno.statSync(pid).size > 0;
    } catch {
      return false;
    }
  }, 10_000);
  return {
    async [Symbol.asyncDispose]() {
      await stopNginx(child);
    },
  };
}

/** The first answer, not followed. */
async function first(cert: string, url: string) {
  using client = Deno.createHttpClient({ caCerts: [cert] });
  const response = await fetch(url, { client, redirect: "manual" });
  await response.body?.cancel();
  return [response.status, response.headers.get("location")];
}

/** Both servers of the pair, each on its own two ports. */
async function bothPairs() {
  const ports = {
    gateway: [freePort(), freePort()] as const,
    nginx: [freePort(), freePort()] as const,
  };
  const g = await prefixWith(commonPair(...ports.gateway));
  const n = await prefixWith(commonPair(...ports.nginx));
  return { ports, g, n };
}

Deno.test("the common pair: http:// answers 301 to https://, followed to the app by a client that trusts the certificate, as nginx", async () => {
  const { ports, g, n } = await bothPairs();
  await using _g = g;
  await using _n = n;
  // In process: the addresses are the listening line's (main_test.ts's
  // processes show the line itself).
  await using gw = await startMain(["--nginx-conf", g.conf]);
  await using _nginx = await runNginx(n);
  deepStrictEqual(gw.urls, [
    `http://127.0.0.1:${ports.gateway[0]}/`,
    `https://127.0.0.1:${ports.gateway[1]}/`,
  ]);
  for (
    const [who, [plain, tls], cert] of [
      ["gateway", ports.gateway, g.cert.cert],
      ["nginx", ports.nginx, n.cert.cert],
    ] as const
  ) {
    deepStrictEqual(
      await first(cert, `http://localhost:${plain}/app/x?y=1`),
      [301, `https://localhost:${tls}/app/x?y=1`],
      who,
    );
    // A folder without its "/": the absolute redirect names https://.
    deepStrictEqual(
      await first(cert, `https://localhost:${tls}/sub`),
      [301, `https://localhost:${tls}/sub/`],
      who,
    );
    deepStrictEqual(
      await follow(cert, `http://localhost:${plain}/`),
      {
        status: 200,
        url: `https://localhost:${tls}/`,
        body: "the app\n",
        redirected: true,
      },
      who,
    );
    deepStrictEqual(
      await follow(cert, `http://127.0.0.1:${plain}/vars`),
      {
        status: 200,
        url: `https://127.0.0.1:${tls}/vars`,
        body: `https on ${tls} 127.0.0.1 127.0.0.1:${tls}\n`,
        redirected: true,
      },
      who,
    );
  }
  // Deno's fetch speaks HTTP/2 where ALPN offers it: both log it so.
  const requests = (lines: string[]) =>
    lines.map((l) => l.split('"')[1]).filter((r) => r!.includes("/vars"));
  await waitFor(() => requests(g.lines("access.log")).length === 2);
  await waitFor(() => requests(n.lines("access.log")).length === 2);
  deepStrictEqual(requests(g.lines("access.log")), [
    "GET /vars HTTP/1.1",
    "GET /vars HTTP/2.0",
  ]);
  deepStrictEqual(
    requests(g.lines("access.log")),
    requests(n.lines("access.log")),
  );
  // The protocol's variables as nginx's.
  deepStrictEqual(g.lines("tls.log"), [
    "GET /vars HTTP/2.0|HTTP/2.0|h2|on|NONE",
  ]);
  deepStrictEqual(g.lines("tls.log"), n.lines("tls.log"));
});

/** Runs curl, bounded. */
async function curl(args: string[]): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--max-time", "20", ...args],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const dec = new TextDecoder();
  return dec.decode(out.stdout) + dec.decode(out.stderr);
}

Deno.test("curl follows the pair over HTTP/1.1 and HTTP/2 with the certificate trusted", async () => {
  const [plain, tls] = [freePort(), freePort()];
  await using p = await prefixWith(commonPair(plain, tls));
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  for (const version of ["--http1.1", "--http2"]) {
    strictEqual(
      await curl([
        version,
        "-L",
        "--cacert",
        p.cert.certPath,
        "-w",
        "%{http_version} %{scheme}\n",
        `http://localhost:${plain}/`,
      ]),
      `the app\n${version === "--http2" ? "2" : "1.1"} HTTPS\n`,
    );
  }
});

Deno.test("plain HTTP sent to the TLS port gets no HTTP answer and the port keeps serving (nginx answers 400)", async () => {
  const [plain, tls] = [freePort(), freePort()];
  await using p = await prefixWith(commonPair(plain, tls));
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  for (let i = 0; i < 3; i++) {
    const raw = await rawRequest(
      tls,
      "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    ok(!raw.startsWith("HTTP/"), raw);
  }
  strictEqual(
    (await follow(p.cert.cert, `https://localhost:${tls}/`)).body,
    "the app\n",
  );
  // No request was read: no access line, nothing at the default level.
  deepStrictEqual(
    p.lines("access.log").map((l) => l.split('"')[1]),
    ["GET / HTTP/2.0"],
  );
  deepStrictEqual(p.lines("error.log"), []);
});

Deno.test("over HTTP/2 the gateway's own 400 ends its stream, not the connection: the next stream is served", async () => {
  // A `Connection: close` answer marks an HTTP/1.x connection to be cut
  // (closing_connections.ts); an HTTP/2 connection carries other streams.
  // Over TLS a request without Host may be HTTP/1.x too, so the 400 itself
  // is cut: the stream fails (curl's 000 and its error), the next is served
  // over the same connection (closing_connections_tls_test.ts).
  const [plain, tls] = [freePort(), freePort()];
  await using p = await prefixWith(commonPair(plain, tls));
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  strictEqual(
    await curl([
      "--http2",
      "--cacert",
      p.cert.certPath,
      "-o",
      "/dev/null",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code} %{http_version} %{num_connects}\n",
      `https://localhost:${tls}/%00`,
      `https://localhost:${tls}/`,
    ]),
    "000 0 1\n200 2 0\n" +
      "curl: (92) HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR (err 2)\n",
  );
});

Deno.test("over TLS the gateway's own 500 ends an HTTP/1.1 connection, as nginx's, and only answers its HTTP/2 stream", async () => {
  // Keep-alive is HTTP/1.x's: nginx closes that connection after its own
  // 500 (ngx_http_special_response_handler); an HTTP/2 stream's page is
  // sent whole and the connection carries the next stream.
  const [plain, tls] = [freePort(), freePort()];
  const pair = commonPair(plain, tls);
  await using p = await prefixWith((dir) =>
    pair(dir).replace(
      "location / { root html; }",
      "location / { root html; }\n    location = /r500 { return 500; }",
    )
  );
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  const both = (version: string) =>
    curl([
      version,
      "--cacert",
      p.cert.certPath,
      "-o",
      "/dev/null",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code} %{http_version} %{num_connects}\n",
      `https://localhost:${tls}/r500`,
      `https://localhost:${tls}/`,
    ]);
  strictEqual(await both("--http2"), "500 2 1\n200 2 0\n");
  strictEqual(await both("--http1.1"), "500 1.1 1\n200 1.1 1\n");
});

/** One request over TLS, its answer read to its framing's end; the status. */
async function tlsExchange(
  cert: string,
  port: number,
  request: string,
): Promise<string> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port,
    caCerts: [cert],
  });
  // A bound for a server that keeps the connection after a short answer.
  const deadline = setTimeout(() => conn.close(), 30_000);
  try {
    await conn.write(new TextEncoder().encode(request));
    const buf = new Uint8Array(16 * 1024);
    let text = "";
    // Bounded: a head and a small page, or the close.
    for (let i = 0; i < 100; i++) {
      const end = text.indexOf("\r\n\r\n");
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1]);
      if (end >= 0 && text.length >= end + 4 + length) break;
      if (end >= 0 && text.endsWith("\r\n0\r\n\r\n")) break;
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return text.split(" ")[1] ?? "";
  } finally {
    clearTimeout(deadline);
    try {
      conn.close();
    } catch { /* closed by the deadline */ }
  }
}

Deno.test("over TLS an HTTP/1.1 request without Host is answered and logged as the client sent it, as nginx", async () => {
  // A field HTTP/2 cannot carry shows the request is HTTP/1.x.
  const requests = [
    "GET /vars HTTP/1.1\r\nConnection: close\r\n\r\n",
    "GET /vars HTTP/1.1\r\nKeep-Alive: timeout=5\r\n\r\n",
    "GET /vars HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
    "POST /vars HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
  ];
  const { ports, g, n } = await bothPairs();
  await using _g = g;
  await using _n = n;
  await using _gw = await startMain(["--nginx-conf", g.conf]);
  await using _nginx = await runNginx(n);
  const statuses = { gateway: [] as string[], nginx: [] as string[] };
  for (const request of requests) {
    statuses.gateway.push(
      await tlsExchange(g.cert.cert, ports.gateway[1], request),
    );
    statuses.nginx.push(
      await tlsExchange(n.cert.cert, ports.nginx[1], request),
    );
  }
  deepStrictEqual(statuses.gateway, statuses.nginx);
  const logged = (p: Prefix) =>
    p.lines("access.log").map((l) => l.split('"')[1]);
  await waitFor(
    () =>
      logged(g).length === requests.length &&
      logged(n).length === requests.length,
    5000,
  );
  deepStrictEqual(logged(g), logged(n));
});
