/**
 * A TLS server's start: a certificate or key that cannot be used is one
 * `[emerg]` in nginx 1.22's words (compared with `nginx -t`), at start and
 * in `--check`; a TLS listener whose accept() fails listens again as a
 * plain one does. Servers with different certificates on one TLS port are
 * refused: the runtime cannot choose one by the name a client sends (SNI).
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort, maskErrorLine, waitFor } from "./_utils.ts";
import { runStartup } from "./_in_process.ts";
import { nginxTestOutput } from "./_nginx.ts";
import { spawnGatewayWith } from "./_spawn_options.ts";
import { commonPair, follow, makeCertificate, prefixWith } from "./_tls.ts";
import { hasPrlimit } from "./_prerequisites.ts";

/** A pair whose TLS server names the given files. */
function tlsServer(cert: string, key: string): (dir: string) => string {
  const port = freePort();
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
    const expected = emergOf(
      await nginxTestOutput({
        prefix: p.dir,
        conf: p.conf,
        errorLog: join(p.dir, "logs", "nginx-error.log"),
        pid: join(p.dir, "logs", "nginx.pid"),
      }),
    );
    strictEqual(expected.length, 1, name);
    // main()'s start in process: the refusal comes before any serving.
    const check = await runStartup(["--check", "--nginx-conf", p.conf]);
    strictEqual(check.code, 1, name);
    deepStrictEqual(emergOf(check.stderr), expected, name);
    ok(!check.stderr.includes("    at "), check.stderr);
    const start = await runStartup(["--nginx-conf", p.conf]);
    strictEqual(start.code, 1, name);
    deepStrictEqual(emergOf(start.stderr), expected, name);
    deepStrictEqual(emergOf(p.lines("error.log").join("\n")), [
      ...expected,
      ...expected,
    ], name);
  }
});

Deno.test("servers on one TLS port with different certificates are one [emerg] at start and in --check: no choice by the name the client sends (SNI)", async () => {
  const port = freePort();
  await using p = await prefixWith((dir) =>
    `events {}
error_log ${dir}/logs/error.log;
http {
  access_log off;
  server {
    listen 127.0.0.1:${port} ssl default_server;
    server_name localhost;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
  }
  server {
    listen 127.0.0.1:${port} ssl;
    server_name other.test;
    ssl_certificate other.crt;
    ssl_certificate_key other.key;
  }
}
`
  );
  await makeCertificate(join(p.dir, "conf"), "other");
  const conf = (name: string) => join(p.dir, "conf", name);
  const expected = [
    `"ssl_certificate" "${conf("other.crt")}" beside "${
      conf("station.crt")
    }" on port ${port} is not supported: the gateway serves one certificate per port (no choice by server name, SNI) in ${p.conf}:14`,
  ];
  for (const args of [["--check"], []]) {
    const run = await runStartup([...args, "--nginx-conf", p.conf]);
    strictEqual(run.code, 1, args.join(" "));
    deepStrictEqual(emergOf(run.stderr), expected, args.join(" "));
    ok(!run.stderr.includes("    at "), run.stderr);
  }
});

Deno.test(
  "a TLS listener whose accept() fails for want of descriptors listens again once they are free, as a plain one",
  { ignore: !hasPrlimit() },
  async () => {
    const [plain, tls] = [freePort(), freePort()];
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
