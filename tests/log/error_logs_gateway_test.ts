/**
 * Each server and location of an nginx.conf writes its error lines to its
 * own `error_log`, in a gateway over real sockets: every line in
 * the file of the level handling the request at that point, none in the
 * others; lines about no request in the main level's; every file rotates.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort, rawRequest, waitFor } from "../_utils.ts";
import { runStartup, startMain } from "../_in_process.ts";
import {
  errorLogsConf,
  EXPECTED_LINES,
  requestLines,
  sendErrorLogRequests,
} from "./_error_logs.ts";
import { exists, nginxPrefix } from "../_prefix.ts";

/** A prefix with `conf/nginx.conf` holding `text`, removed at the end. */
const prefixWith = (text: string) =>
  nginxPrefix(text, { name: "error-logs-", dirs: ["conf"] });

Deno.test("each server and location writes its error lines to its own error_log, and nothing to the others", async () => {
  await using p = await prefixWith(errorLogsConf(freePort()));
  // In process: each line comes from the serving gateway's handlers. That
  // lines about no request go to the main level's log is the unwritable
  // location's test below; the "started" line only a process writes is
  // main_test.ts's SIGTERM test's.
  await using gw = await startMain(["--nginx-conf", p.conf]);
  await sendErrorLogRequests(gw.port);
  await waitFor(() => requestLines(p.prefix)["a.log"].length >= 4);
  deepStrictEqual(requestLines(p.prefix), EXPECTED_LINES);
});

Deno.test("every error_log file rotates by size on its own", async () => {
  await using p = await prefixWith(`events {}
http {
  access_log off;
  error_log logs/error.log;
  server {
    listen 127.0.0.1:0;
    root html;
    location /a/ { error_log logs/a.log; }
    location /b/ { error_log logs/b.log; error_log logs/b2.log; }
  }
}
`);
  await using gw = await startMain([
    "--nginx-conf",
    p.conf,
    "--log-max-size",
    "1k",
  ]);
  const logs = join(p.prefix, "logs");
  const rotated = () =>
    ["a", "b", "b2"].every((n) => exists(join(logs, `${n}.log.1`)));
  for (let i = 0; i < 100 && !rotated(); i++) {
    for (const path of ["/a/", "/b/"]) {
      await rawRequest(
        gw.port,
        `GET ${path}${i} HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n`,
      );
    }
  }
  await waitFor(rotated);
  for (const name of ["a.log", "b.log", "b2.log"]) {
    const size = (await Deno.stat(join(logs, name))).size;
    ok(size <= 1024, `${name}: ${size} bytes`);
  }
  // The server's own file got no request's line: each had its location's.
  ok(!/client: /.test(await Deno.readTextFile(join(logs, "error.log"))));
});

Deno.test("a location's error_log that cannot be written is told in the main level's log", async () => {
  await using p = await prefixWith(`error_log logs/main.log;
events {}
http {
  access_log off;
  server {
    listen 127.0.0.1:0;
    root html;
    location /loc/ { error_log logs/loc.log; }
  }
}
`);
  // In process: the file's failure reaches the main log through the
  // serving gateway's fault policy, which startMain() starts as main() does.
  await using gw = await startMain(["--nginx-conf", p.conf]);
  const started = Date.now();
  const loc = join(p.prefix, "logs", "loc.log");
  const main = join(p.prefix, "logs", "main.log");
  // A folder in the file's place: the file's next check reopens it, and fails.
  await Deno.remove(loc);
  await Deno.mkdir(loc);
  const told = () =>
    Deno.readTextFileSync(main).includes(`cannot reopen log file "${loc}"`);
  // The file looks at its path at most once a second since it opened it
  // (when the gateway started, before startMain() returned): a request after
  // that second writes a line, which looks, and fails to reopen. A count of
  // requests instead ran out within the second on a fast host.
  await waitFor(() => Date.now() - started > 1000, 5000);
  await rawRequest(
    gw.port,
    `GET /loc/1 HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n`,
  );
  await waitFor(told);
  match(
    await Deno.readTextFile(main),
    /\[alert\] \d+#\d+: cannot reopen log file "[^"]+\/loc\.log": /,
  );
  // And on stderr, as before.
  match(gw.output(), /\[alert\] cannot reopen log file/);
});

Deno.test("--check accepts each server's and location's error_log and opens every file", async () => {
  await using p = await prefixWith(errorLogsConf(freePort()));
  // A file where the location's log folder should be: that open fails.
  await Deno.writeTextFile(
    p.conf,
    (await Deno.readTextFile(p.conf)).replace(
      "error_log logs/loc.log;",
      "error_log logs/blocked/loc.log;",
    ),
  );
  await Deno.mkdir(join(p.prefix, "logs"));
  await Deno.writeTextFile(join(p.prefix, "logs", "blocked"), "");
  const { code, stderr } = await runStartup([
    "--check",
    "--nginx-conf",
    p.conf,
  ]);
  strictEqual(code, 1);
  match(
    stderr,
    /\[emerg\] open\(\) "[^"]+\/logs\/blocked\/loc\.log" failed \(\d+: [^)]+\)/,
  );
  // Every other level's file was opened, and nothing else was refused.
  for (const name of ["main.log", "a.log", "b.log", "loc-info.log"]) {
    ok(exists(join(p.prefix, "logs", name)), name);
  }
  strictEqual(stderr.match(/\[emerg\]/g)?.length, 1, stderr);
});

Deno.test("a server's error_log stderr writes its request lines to stderr", async () => {
  // In process: `error_log stderr` writes through main()'s stderr writer,
  // which startMain() captures (main_test.ts's processes show that writer's
  // way to the real stderr).
  await using p = await prefixWith(`events {}
http {
  access_log off;
  server {
    listen 127.0.0.1:0;
    root html;
    error_log stderr;
    location /file/ { error_log logs/file.log; }
  }
}
`);
  await using gw = await startMain(["--nginx-conf", p.conf]);
  for (const path of ["/missing", "/file/missing"]) {
    await rawRequest(
      gw.port,
      `GET ${path} HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n`,
    );
  }
  await waitFor(() => gw.output().includes("/html/missing"));
  match(
    gw.output(),
    /\n\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[error\] \d+#\d+: \*\d+ open\(\) "[^"]+\/html\/missing" failed \(2: [^)]+\), client: 127\.0\.0\.1, server: , request: "GET \/missing HTTP\/1\.1", host: "s"\n/,
  );
  // The location's own file took its line; stderr did not.
  ok(!gw.output().includes("/file/missing"));
  match(
    await Deno.readTextFile(join(p.prefix, "logs", "file.log")),
    /open\(\) "[^"]+\/html\/file\/missing" failed/,
  );
});
