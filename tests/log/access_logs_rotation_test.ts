/**
 * Every access log file a configuration names rotates by size on its own,
 * as the one access log always has: a gateway (in this process) with two locations,
 * each with its own file, and `--log-max-size`.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, waitFor } from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { exists, nginxPrefix } from "../_prefix.ts";

function size(path: string): number | null {
  try {
    return Deno.statSync(path).size;
  } catch {
    return null;
  }
}

Deno.test("each access log file of an nginx.conf rotates by size on its own", async () => {
  await using p = await nginxPrefix(
    `events {}
http {
  error_log logs/error.log;
  access_log logs/access.log;
  server {
    listen 127.0.0.1:0;
    location /a/ { access_log logs/a.log; return 200 "a\\n"; }
    location /b/ {
      access_log logs/b.log;
      access_log logs/b2.log;
      return 200 "b\\n";
    }
  }
}
`,
    { name: "access-rotate-" },
  );
  await using gw = await startMain([
    "--nginx-conf",
    p.conf,
    "--log-max-size",
    "1k",
  ]);
  const logs = join(p.prefix, "logs");
  for (let i = 0; i < 100; i++) {
    for (const path of ["/a/", "/b/"]) {
      await rawRequest(
        gw.port,
        `GET ${path}${i} HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n`,
      );
    }
    if (["a", "b", "b2"].every((n) => exists(join(logs, `${n}.log.1`)))) {
      break;
    }
  }
  await waitFor(() =>
    ["a", "b", "b2"].every((n) => exists(join(logs, `${n}.log.1`)))
  );
  for (const name of ["a.log", "b.log", "b2.log"]) {
    const size = (await Deno.stat(join(logs, name))).size;
    ok(size <= 1024, `${name}: ${size} bytes`);
  }
  // The http level's file got no line: every request had its own logs.
  ok((size(join(logs, "access.log")) ?? 0) === 0);
});
