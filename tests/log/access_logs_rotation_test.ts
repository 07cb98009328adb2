/**
 * Every access log file a configuration names rotates by size on its own,
 * as the one access log always has: a gateway (in this process) with two locations,
 * each with its own file, and `--log-max-size`.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { maskErrorLine, rawRequest, waitFor } from "../_utils.ts";
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

Deno.test("a folder in an old log's slot keeps the access log within --log-max-size, told once in the error log and on stderr", async () => {
  await using p = await nginxPrefix(
    `events {}
http {
  error_log logs/error.log;
  access_log logs/access.log;
  server {
    listen 127.0.0.1:0;
    location / { return 200 "a\\n"; }
  }
}
`,
    { name: "access-rotate-blocked-" },
  );
  await using gw = await startMain([
    "--nginx-conf",
    p.conf,
    "--log-max-size",
    "4k",
    "--log-keep",
    "3",
  ]);
  const logs = join(p.prefix, "logs");
  const access = join(logs, "access.log");
  const get = (i: number) =>
    rawRequest(
      gw.port,
      `GET /${i} HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n`,
    );
  let i = 0;
  // Every slot filled first.
  for (; i < 1000 && !exists(`${access}.3`); i++) await get(i);
  await Deno.remove(`${access}.3`);
  await Deno.mkdir(`${access}.3`);
  await Deno.writeTextFile(`${access}.3/kept`, "the operator's\n");
  for (const end = i + 300; i < end; i++) await get(i);
  for (const name of ["access.log", "access.log.1", "access.log.2"]) {
    const bytes = size(join(logs, name)) ?? 0;
    ok(bytes <= 4096, `${name}: ${bytes} bytes`);
  }
  ok((await Deno.readTextFile(access)).includes(`"GET /${i - 1} HTTP/1.1"`));
  const told = (text: string) =>
    text.split("\n").filter((l) => l.includes("cannot rotate log file"));
  const lines = told(await Deno.readTextFile(join(logs, "error.log")));
  strictEqual(lines.length, 1, lines.join("\n"));
  // Linux: (21: Is a directory); Windows: (5: Access is denied).
  const os = Deno.build.os === "windows"
    ? "5: Access is denied"
    : "21: Is a directory";
  strictEqual(
    maskErrorLine(lines[0]!),
    `TIME [alert] PID#TID: *N cannot rotate log file "${access}": rename() "${access}.2" to "${access}.3" failed (${os}), "${access}.2" deleted instead`,
  );
  strictEqual(told(gw.output()).length, 1, gw.output());
});
