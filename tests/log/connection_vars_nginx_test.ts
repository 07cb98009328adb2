/**
 * `$connection` and `$connection_requests` in an access line, beside nginx
 * 1.22: the connection's number (the error lines' `*N`) and the requests
 * it has carried, this one included. `$pipe` is `.` on both here: the
 * requests are sent one after another's answer (README,
 * connection-vars: Deno.serve does not tell a pipelined one).
 */
import { deepStrictEqual } from "node:assert/strict";
import { readResponse } from "../_keep_alive.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { waitFor } from "../_utils.ts";

Deno.test("$connection and $connection_requests count as nginx 1.22's", async () => {
  await using sides = await bothSides((port) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format c '$connection $connection_requests $pipe $request_uri';
  access_log logs/access.log c;
  server {
    listen 127.0.0.1:${port};
    location / { return 200 "x"; }
  }
}
`
  );
  const got: string[][] = [];
  for (const side of [sides.nginx, sides.gateway]) {
    for (const uris of [["/a", "/b", "/c"], ["/d"], ["/e", "/f"]]) {
      const conn = await Deno.connect({
        hostname: "127.0.0.1",
        port: side.port,
      });
      const state = { buffer: new Uint8Array(0) };
      try {
        for (const uri of uris) {
          await conn.write(
            new TextEncoder().encode(`GET ${uri} HTTP/1.1\r\nHost: t\r\n\r\n`),
          );
          await readResponse(conn, state);
        }
      } finally {
        conn.close();
      }
    }
    await waitFor(() => logLines(side.prefix, "access.log").length >= 6);
    got.push(logLines(side.prefix, "access.log"));
  }
  deepStrictEqual(got[1], got[0]);
});
