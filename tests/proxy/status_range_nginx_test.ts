/**
 * An upstream's status past 599, beside nginx 1.22 running the same
 * nginx.conf (README, status-range): nginx relays it (`600 X`, and `600` in
 * its access line, no error line); the runtime sends 200 to 599 only
 * (`Response` throws a `RangeError` for any other), so the gateway answers
 * 502 with an `[error]` line that says why.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log error;
events {}
http {
${TEMP}
  log_format status "$status $upstream_status";
  access_log logs/access.log status;
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://127.0.0.1:${upstream}; }
  }
}
`;
}

/** What one side sent and logged for one request. */
async function exchange(
  port: number,
  prefix: string,
): Promise<{ status: string; access: string[]; errors: string[] }> {
  const raw = await rawRequest(
    port,
    "GET /s HTTP/1.1\r\nHost: station\r\nConnection: close\r\n\r\n",
    5000,
  );
  await waitFor(() => logLines(prefix, "access.log").length > 0, 5000);
  return {
    status: raw.slice(0, raw.indexOf("\r\n")),
    access: logLines(prefix, "access.log"),
    errors: logLines(prefix, "error.log").map((l) =>
      maskErrorLine(l).replace(/, client: .*$/, "")
    ),
  };
}

Deno.test("known difference status-range: an upstream's 600 is relayed by nginx 1.22, a 502 with its reason from the gateway", async () => {
  await using up = startRawUpstream(async (conn) => {
    if (await readHead(conn) === null) return;
    await writeText(
      conn,
      "HTTP/1.1 600 X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nup",
    );
  });
  await using both = await bothSides((port) => conf(port, up.port));
  const { nginx: theirs, gateway: ours } = both;
  deepStrictEqual(await exchange(theirs.port, theirs.prefix), {
    status: "HTTP/1.1 600 X",
    access: ["600 600"],
    errors: [],
  });
  deepStrictEqual(await exchange(ours.port, ours.prefix), {
    status: "HTTP/1.1 502 Bad Gateway",
    access: ["502 502"],
    errors: [
      "TIME [error] PID#TID: *N upstream sent status 600: the gateway's " +
      "runtime sends a status from 200 to 599 only while reading response " +
      "header from upstream",
    ],
  });
});
