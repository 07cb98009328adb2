/**
 * `$server_name` and the `server:` field of error lines are the server's
 * first name as written, a regex name's `~…` text too (nginx's
 * cscf->server_name), beside nginx 1.22.
 */
import { deepStrictEqual } from "node:assert/strict";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { maskErrorLine, rawRequest } from "../_utils.ts";

Deno.test("a server whose first name is a regex names it in $server_name and its error lines, as nginx", async () => {
  await using sides = await bothSides((port) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name ~^(?<sub>.+)\\.ex\\.com$ other.com;
    location = / { return 200 "[$server_name] [$sub]"; }
    location / { root html; }
  }
}
`
  );
  const got: unknown[] = [];
  for (const side of [sides.nginx, sides.gateway]) {
    const page = await rawRequest(
      side.port,
      "GET / HTTP/1.1\r\nHost: a.ex.com\r\nConnection: close\r\n\r\n",
    );
    await rawRequest(
      side.port,
      "GET /none HTTP/1.1\r\nHost: other.com\r\nConnection: close\r\n\r\n",
    );
    got.push([
      page.slice(page.indexOf("\r\n\r\n") + 4),
      logLines(side.prefix, "error.log").filter((l) => l.includes("client:"))
        .map((l) => maskErrorLine(l).replace(side.prefix, "PREFIX")),
    ]);
  }
  deepStrictEqual(got[1], got[0]);
});

Deno.test("$server_name of a .name, a wildcard and $hostname is nginx's, and $hostname names the machine's server", async () => {
  await using sides = await bothSides((port) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
  server { listen 127.0.0.1:${port}; return 200 "default"; }
  server { listen 127.0.0.1:${port}; server_name .dot.com; return 200 "[$server_name]"; }
  server { listen 127.0.0.1:${port}; server_name *.star.com; return 200 "[$server_name]"; }
  server { listen 127.0.0.1:${port}; server_name www.x.*; return 200 "[$server_name]"; }
  server { listen 127.0.0.1:${port}; server_name $hostname; return 200 "[$server_name]"; }
}
`
  );
  const hosts = [
    "a.dot.com",
    "dot.com",
    "b.star.com",
    "www.x.org",
    Deno.hostname(),
  ];
  const got: string[][] = [];
  for (const side of [sides.nginx, sides.gateway]) {
    const pages: string[] = [];
    for (const host of hosts) {
      const raw = await rawRequest(
        side.port,
        `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      pages.push(`${host} ${raw.slice(raw.indexOf("\r\n\r\n") + 4)}`);
    }
    got.push(pages);
  }
  deepStrictEqual(got[1], got[0]);
});
