/**
 * The same nginx.conf run by nginx 1.22 and by the gateway, each from its
 * own prefix: two servers and a location with their own `error_log`, and
 * the same requests. Every line lands in the same file on both sides, and
 * no file holds a line the other side's does not.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { nginxArgs, nginxBinary } from "../_nginx.ts";
import { rawRequest, refusedPort, spawnGateway, waitFor } from "../_utils.ts";
import {
  errorLogsConf,
  EXPECTED_LINES,
  requestLines,
  sendErrorLogRequests,
} from "./_error_logs.ts";
import { nginxPrefix } from "../_prefix.ts";

/** nginx as a foreground process, its temp folders in its prefix. */
const PROCESS = "daemon off;\nmaster_process off;\n";
const TEMP = [
  "client_body_temp_path temp/body;",
  "proxy_temp_path temp/proxy;",
  "fastcgi_temp_path temp/fastcgi;",
  "uwsgi_temp_path temp/uwsgi;",
  "scgi_temp_path temp/scgi;",
].map((l) => `  ${l}`).join("\n");

/** A prefix with `conf/nginx.conf`, `logs/` and `temp/`, removed at the end. */
const prefixWith = (text: string) =>
  nginxPrefix(text, {
    name: "error-logs-nginx-",
    dirs: ["conf", "logs", "temp"],
  });

/** Runs nginx on a prefix's configuration until disposed. */
async function runNginx(
  prefix: string,
  conf: string,
): Promise<AsyncDisposable> {
  const pid = join(prefix, "nginx.pid");
  const child = new Deno.Command(await nginxBinary(), {
    args: nginxArgs({
      prefix,
      conf,
      errorLog: join(prefix, "logs", "early.log"),
      pid,
    }),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const stop = async () => {
    child.kill("SIGTERM");
    await child.status;
    return await stderr;
  };
  try {
    await waitFor(() => {
      try {
        Deno.statSync(pid);
        return true;
      } catch {
        return false;
      }
    }, 5000);
  } catch (error) {
    throw new Error(`nginx did not start: ${await stop()}`, { cause: error });
  }
  return { [Symbol.asyncDispose]: async () => void await stop() };
}

Deno.test("nginx and the gateway write each server's and location's error lines to the same files", async () => {
  const [theirPort, ourPort] = [refusedPort(), refusedPort()];
  await using theirs = await prefixWith(
    PROCESS + errorLogsConf(theirPort, TEMP),
  );
  await using ours = await prefixWith(PROCESS + errorLogsConf(ourPort, TEMP));
  await using _nginx = await runNginx(theirs.prefix, theirs.conf);
  await using _gw = await spawnGateway(["--nginx-conf", ours.conf]);
  await sendErrorLogRequests(theirPort);
  await sendErrorLogRequests(ourPort);
  for (const side of [theirs, ours]) {
    await waitFor(() => requestLines(side.prefix)["a.log"].length >= 4);
  }
  deepStrictEqual(requestLines(theirs.prefix), EXPECTED_LINES);
  deepStrictEqual(requestLines(ours.prefix), requestLines(theirs.prefix));
});

Deno.test("known difference head-lines-server: a line about the request head goes to the default server's error_log (nginx: the Host field's server once read)", async () => {
  const [theirPort, ourPort] = [refusedPort(), refusedPort()];
  await using theirs = await prefixWith(
    PROCESS + errorLogsConf(theirPort, TEMP),
  );
  await using ours = await prefixWith(PROCESS + errorLogsConf(ourPort, TEMP));
  await using _nginx = await runNginx(theirs.prefix, theirs.conf);
  await using _gw = await spawnGateway(["--nginx-conf", ours.conf]);
  // nginx refuses TRACE after every field is read (ngx_http_process_request_header).
  const trace = "TRACE / HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n";
  await rawRequest(theirPort, trace);
  await rawRequest(ourPort, trace);
  const line = (server: string) =>
    `TIME [info] PID#TID: *N client sent TRACE method while reading client request headers, client: 127.0.0.1, server: ${server}, request: "TRACE / HTTP/1.1", host: "b.test"`;
  await waitFor(() => requestLines(theirs.prefix)["b.log"].length === 1);
  await waitFor(() => requestLines(ours.prefix)["a.log"].length === 1);
  deepStrictEqual(requestLines(theirs.prefix)["b.log"], [line("b.test")]);
  deepStrictEqual(requestLines(ours.prefix)["a.log"], [line("")]);
});
