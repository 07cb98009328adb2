/**
 * TLS end to end, beside nginx 1.22 with the same configuration: the
 * common pair (port 80 answering `return 301 https://…`, the app on a
 * `listen … ssl` port) followed by clients that trust the test's own
 * self-signed certificate, HTTP/2 by ALPN, plain HTTP sent to the TLS
 * port, and the `[emerg]` lines for a certificate or key that cannot be
 * used, at start and in `--check`.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  maskErrorLine,
  rawRequest,
  refusedPort,
  runCli,
  spawnGateway,
  waitFor,
} from "./_utils.ts";
import { nginxArgs, nginxBinary } from "./_nginx.ts";
import { spawnGatewayWith } from "./_spawn_options.ts";
import { makeCertificate, type TestCertificate } from "./_tls.ts";

/** A prefix: `conf/nginx.conf`, the certificate in `conf/`, `html/`, `logs/`. */
interface Prefix extends AsyncDisposable {
  dir: string;
  conf: string;
  cert: TestCertificate;
  lines(name: "error.log" | "access.log"): string[];
}

async function prefixWith(
  text: (dir: string) => string,
): Promise<Prefix> {
  const dir = await Deno.makeTempDir({ prefix: "tls-" });
  for (const sub of ["conf", "logs", "html"]) {
    await Deno.mkdir(join(dir, sub));
  }
  const cert = await makeCertificate(join(dir, "conf"));
  await Deno.writeTextFile(join(dir, "html", "index.html"), "the app\n");
  await Deno.mkdir(join(dir, "html", "sub"));
  await Deno.writeTextFile(join(dir, "html", "sub", "index.html"), "sub\n");
  const conf = join(dir, "conf", "nginx.conf");
  await Deno.writeTextFile(conf, text(dir));
  return {
    dir,
    conf,
    cert,
    lines: (name) => {
      try {
        return Deno.readTextFileSync(join(dir, "logs", name)).split("\n")
          .filter((l) => l !== "");
      } catch {
        return [];
      }
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** The common pair on two free ports (443 stands for the TLS port). */
function commonPair(plain: number, tls: number): (dir: string) => string {
  return (dir) =>
    `events {}
http {
  error_log ${dir}/logs/error.log;
  access_log ${dir}/logs/access.log;
  server {
    listen 127.0.0.1:${plain};
    server_name localhost;
    return 301 https://$host:${tls}$request_uri;
  }
  server {
    listen 127.0.0.1:${tls} ssl http2;
    server_name localhost;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / { root html; }
    location /vars { return 200 "$scheme $https $server_port $host $http_host\\n"; }
  }
}
`;
}

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
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** What a client that trusts the certificate sees, following redirects. */
async function follow(
  cert: string,
  url: string,
): Promise<{ status: number; url: string; body: string; redirected: boolean }> {
  using client = Deno.createHttpClient({ caCerts: [cert] });
  const response = await fetch(url, { client });
  return {
    status: response.status,
    url: response.url,
    body: await response.text(),
    redirected: response.redirected,
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
    gateway: [refusedPort(), refusedPort()] as const,
    nginx: [refusedPort(), refusedPort()] as const,
  };
  const g = await prefixWith(commonPair(...ports.gateway));
  const n = await prefixWith(commonPair(...ports.nginx));
  return { ports, g, n };
}

Deno.test("the common pair: http:// answers 301 to https://, followed to the app by a client that trusts the certificate, as nginx", async () => {
  const { ports, g, n } = await bothPairs();
  await using _g = g;
  await using _n = n;
  await using gw = await spawnGateway(["--nginx-conf", g.conf]);
  await using _nginx = await runNginx(n);
  match(
    gw.output(),
    /listening on http:\/\/127\.0\.0\.1:\d+\/ and https:\/\/127\.0\.0\.1:\d+\//,
  );
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
  const [plain, tls] = [refusedPort(), refusedPort()];
  await using p = await prefixWith(commonPair(plain, tls));
  await using _gw = await spawnGateway(["--nginx-conf", p.conf]);
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
  const [plain, tls] = [refusedPort(), refusedPort()];
  await using p = await prefixWith(commonPair(plain, tls));
  await using _gw = await spawnGateway(["--nginx-conf", p.conf]);
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

/** A pair whose TLS server names the given files. */
function tlsServer(cert: string, key: string): (dir: string) => string {
  const port = refusedPort();
  return (dir) =>
    `events {}
error_log ${dir}/logs/error.log;
http {
  access_log off;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
  }
}
`;
}

/** The `[emerg]` message of a run's output, without time and pid. */
function emergOf(text: string): string[] {
  return text.split("\n").filter((l) => l.includes("[emerg]")).map((l) =>
    maskErrorLine(l).replace(/^.*\[emerg\] (PID#TID: \*N )?/, "")
  );
}

Deno.test("a certificate or key that cannot be used is one [emerg] in nginx's words, at start and in --check", async () => {
  const cases: [string, string, string][] = [
    ["a missing certificate", "missing.crt", "station.key"],
    ["a certificate that is no PEM", "nginx.conf", "station.key"],
    ["a key that is no PEM", "station.crt", "station.crt"],
    ["a key of another pair", "station.crt", "other.key"],
  ];
  for (const [name, cert, key] of cases) {
    await using p = await prefixWith(tlsServer(cert, key));
    await makeCertificate(join(p.dir, "conf"), "other");
    const nginx = await new Deno.Command(await nginxBinary(), {
      args: nginxArgs({
        prefix: p.dir,
        conf: p.conf,
        errorLog: join(p.dir, "logs", "nginx-error.log"),
        pid: join(p.dir, "logs", "nginx.pid"),
      }, true),
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    const expected = emergOf(new TextDecoder().decode(nginx.stderr));
    strictEqual(expected.length, 1, name);
    const check = await runCli(["--check", "--nginx-conf", p.conf]);
    strictEqual(check.code, 1, name);
    deepStrictEqual(emergOf(check.stderr), expected, name);
    ok(!check.stderr.includes("    at "), check.stderr);
    const start = await runCli(["--nginx-conf", p.conf]);
    strictEqual(start.code, 1, name);
    deepStrictEqual(emergOf(start.stderr), expected, name);
    deepStrictEqual(emergOf(p.lines("error.log").join("\n")), [
      ...expected,
      ...expected,
    ], name);
  }
});

const hasPrlimit = Deno.build.os === "linux" &&
  (() => {
    try {
      return new Deno.Command("prlimit", { args: ["--version"] }).outputSync()
        .success;
    } catch {
      return false;
    }
  })();

Deno.test(
  "a TLS listener whose accept() fails for want of descriptors listens again once they are free, as a plain one",
  { ignore: !hasPrlimit },
  async () => {
    const [plain, tls] = [refusedPort(), refusedPort()];
    await using p = await prefixWith(commonPair(plain, tls));
    // Deno and the gateway use about 27 descriptors; the rest are clients'.
    await using gw = await spawnGatewayWith({}, ["--nginx-conf", p.conf], [
      "prlimit",
      "--nofile=96:96",
    ]);
    const conns: Deno.Conn[] = [];
    const log = () => p.lines("error.log").join("\n");
    try {
      for (let i = 0; i < 200; i++) {
        try {
          conns.push(await Deno.connect({ hostname: "127.0.0.1", port: tls }));
        } catch {
          break; // the backlog is full or the listener is gone
        }
      }
      await waitFor(() => /accept4\(\) failed/.test(log()), 5000).catch(
        () => {}, // asserted below with the log in the message
      );
    } finally {
      for (const conn of conns) conn.close();
    }
    match(
      log(),
      /\[crit\] \d+#\d+: accept4\(\) failed \(24: Too many open files\)/,
    );
    // Bounded: the re-listen pauses 0.5 s after a first failure.
    const end = Date.now() + 10_000;
    let body = "";
    while (body === "" && Date.now() < end) {
      body = await follow(p.cert.cert, `https://localhost:${tls}/`).then(
        (r) => r.body,
        () => "",
      );
      if (body === "") await new Promise((r) => setTimeout(r, 50));
    }
    strictEqual(body, "the app\n", log());
    strictEqual(/unhandled|Error:|\n\s+at /.test(log()), false, log());
    strictEqual(/\bat |Error/.test(gw.output()), false, gw.output());
  },
);
