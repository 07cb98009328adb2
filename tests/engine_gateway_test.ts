/**
 * An nginx.conf run by the engine in a real gateway, started from its
 * command line as main() starts it: several servers on several ports,
 * chosen by port and name.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort, rawRequest, waitFor } from "./_utils.ts";
import { startMain } from "./_in_process.ts";
import { nginxPrefix } from "./_prefix.ts";

/** A prefix with `conf/nginx.conf` holding `text`. */
const prefixWith = (text: string) => nginxPrefix(text, { name: "engine-gw-" });

/** A GET with a given Host (fetch sets its own), answered with a close. */
async function get(
  port: number,
  host: string,
  path = "/",
): Promise<[number, string]> {
  const raw = await rawRequest(
    port,
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
  );
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  return [Number(head.split(" ")[1]), body];
}

Deno.test("an nginx.conf's servers answer on each port by name", async () => {
  // Two ports nothing listens on now: the gateway binds both.
  const [a, b] = [freePort(), freePort()];
  await using p = await prefixWith(`events {}
http {
  server { listen 127.0.0.1:${a}; return 200 "first\\n"; }
  server { listen 127.0.0.1:${b}; server_name one.test; return 200 "one $server_port\\n"; }
  server { listen 127.0.0.1:${b} default_server; server_name two.test; location / { return 200 "two $host\\n"; } }
}`);
  await using gw = await startMain(["--nginx-conf", p.conf]);
  strictEqual(gw.port, a);
  deepStrictEqual(await get(a, "x.test"), [200, "first\n"]);
  deepStrictEqual(await get(b, "one.test"), [200, `one ${b}\n`]);
  deepStrictEqual(await get(b, "TWO.test:1"), [200, "two two.test\n"]);
  deepStrictEqual(await get(b, "other.test"), [200, "two other.test\n"]);
});

Deno.test("an nginx.conf's log_format writes the access lines (nginx's stock main)", async () => {
  const port = freePort();
  await using p = await prefixWith(`events {}
http {
  log_format  main  '$remote_addr - $remote_user [$time_local] "$request" '
                    '$status $body_bytes_sent "$http_referer" '
                    '"$http_user_agent" "$http_x_forwarded_for" $host';
  access_log  logs/access.log  main;
  server { listen 127.0.0.1:${port}; location / { return 200 "ok\\n"; } }
}`);
  await using gw = await startMain(["--nginx-conf", p.conf]);
  await rawRequest(
    gw.port,
    "GET /x?y=1 HTTP/1.1\r\nHost: Station.test:81\r\nUser-Agent: t/1\r\n" +
      "X-Forwarded-For: 10.0.0.9\r\nConnection: close\r\n\r\n",
  );
  const path = join(p.prefix, "logs", "access.log");
  await waitFor(() => Deno.readTextFileSync(path).includes("\n"), 5000);
  match(
    await Deno.readTextFile(path),
    /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/x\?y=1 HTTP\/1\.1" 200 3 "-" "t\/1" "10\.0\.0\.9" station\.test\n$/,
  );
});

Deno.test("allow and deny answer as nginx: the first rule that matches, 403 and its line", async () => {
  const port = freePort();
  await using p = await prefixWith(`events {}
http {
  server {
    listen 127.0.0.1:${port};
    allow 10.0.0.0/8;
    deny all;
    location /open/ { allow all; try_files /none =204; }
    location /inner/ { deny 10.1.0.0/16; allow 127.0.0.1; try_files /none =204; }
    location /return/ { return 200 "return\\n"; }
    location / { try_files /none =204; }
  }
}`);
  await using gw = await startMain(["--nginx-conf", p.conf]);
  // A level with its own rules replaces the server's list.
  deepStrictEqual(await get(gw.port, "a", "/open/x"), [204, ""]);
  deepStrictEqual(await get(gw.port, "a", "/inner/x"), [204, ""]);
  // `return` runs in the rewrite phase, before access (as nginx).
  deepStrictEqual(await get(gw.port, "a", "/return/x"), [200, "return\n"]);
  const [status] = await get(gw.port, "a", "/");
  strictEqual(status, 403);
  const log = join(p.prefix, "logs", "error.log");
  await waitFor(() =>
    Deno.readTextFileSync(log).includes("access forbidden by rule")
  );
  match(
    await Deno.readTextFile(log),
    /\[error\] \d+#\d+: \*\d+ access forbidden by rule, client: 127\.0\.0\.1, server: , request: "GET \/ HTTP\/1\.1", host: "a"\n/,
  );
});

Deno.test("a request without Host on an nginx.conf's second port is read as HTTP/1.x, not as HTTP/2 prior knowledge", async () => {
  const [a, b] = [freePort(), freePort()];
  await using p = await prefixWith(`events {}
http {
  access_log logs/access.log;
  server { listen 127.0.0.1:${a}; return 200 "first\\n"; }
  server { listen 127.0.0.1:${b}; return 200 "second\\n"; }
}`);
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  const raw = await rawRequest(b, "GET / HTTP/1.0\r\n\r\n");
  match(raw, /^HTTP\/1\.[01] 400 /);
  const path = join(p.prefix, "logs", "access.log");
  await waitFor(() => Deno.readTextFileSync(path).includes("\n"), 5000);
  // The runtime gives no version: HTTP/1.0 is logged as HTTP/1.1.
  match(await Deno.readTextFile(path), /"GET \/ HTTP\/1\.1" 400 /);
});
