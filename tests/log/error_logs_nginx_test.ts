/**
 * The same nginx.conf run by nginx 1.22 and by the gateway, each from its
 * own prefix: two servers and a location with their own `error_log`, and
 * the same requests. Every line lands in the same file on both sides, and
 * no file holds a line the other side's does not.
 */
import { deepStrictEqual } from "node:assert/strict";
import { rawRequest, waitFor } from "../_utils.ts";
import {
  errorLogsConf,
  EXPECTED_LINES,
  requestLines,
  sendErrorLogRequests,
} from "./_error_logs.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";

/** The shared error_log configuration, as a process in its prefix. */
function conf(port: number): string {
  return PROCESS + errorLogsConf(port, TEMP);
}

Deno.test("nginx and the gateway write each server's and location's error lines to the same files", async () => {
  await using both = await bothSides(conf);
  const { nginx: theirs, gateway: ours } = both;
  await sendErrorLogRequests(theirs.port);
  await sendErrorLogRequests(ours.port);
  for (const side of [theirs, ours]) {
    await waitFor(() => requestLines(side.prefix)["a.log"].length >= 4);
  }
  deepStrictEqual(requestLines(theirs.prefix), EXPECTED_LINES);
  deepStrictEqual(requestLines(ours.prefix), requestLines(theirs.prefix));
});

Deno.test("known difference head-lines-server: a line about a field after Host goes to the default server's error_log (nginx: the Host field's server once read); one found once the whole head is read goes to the Host field's server on both", async () => {
  await using both = await bothSides(conf);
  const { nginx: theirs, gateway: ours } = both;
  // nginx refuses TRACE after every field is read
  // (ngx_http_process_request_header): the Host field's server by then.
  const trace = "TRACE / HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n";
  // A field past the header buffers after Host: nginx has switched to
  // b.test; Deno hands the fields over without their order.
  const big = `GET /x HTTP/1.1\r\nHost: b.test\r\nX-Big: ${
    "a".repeat(9000)
  }\r\nConnection: close\r\n\r\n`;
  for (const port of [theirs.port, ours.port]) {
    await rawRequest(port, trace);
    await rawRequest(port, big);
  }
  const traceLine =
    `TIME [info] PID#TID: *N client sent TRACE method while reading client request headers, client: 127.0.0.1, server: b.test, request: "TRACE / HTTP/1.1", host: "b.test"`;
  // How much of the field each shows differs (header-buffers), and the
  // gateway names it in lower case (header-name-case).
  const bigLine = (server: string) =>
    `TIME [info] PID#TID: *N client sent too long header line: "x-big: a..." while reading client request headers, client: 127.0.0.1, server: ${server}, request: "GET /x HTTP/1.1", host: "b.test"`;
  const shown = (side: string[]) =>
    side.map((l) => l.replace(/"X-Big: a+\.\.\."/i, '"x-big: a..."'));
  await waitFor(() => requestLines(theirs.prefix)["b.log"].length === 2);
  await waitFor(() => requestLines(ours.prefix)["a.log"].length === 1);
  await waitFor(() => requestLines(ours.prefix)["b.log"].length === 1);
  deepStrictEqual(shown(requestLines(theirs.prefix)["b.log"]), [
    traceLine,
    bigLine("b.test"),
  ]);
  deepStrictEqual(requestLines(ours.prefix)["b.log"], [traceLine]);
  deepStrictEqual(shown(requestLines(ours.prefix)["a.log"]), [bigLine("")]);
});
