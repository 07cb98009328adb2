/**
 * A folder's URI (`/`, `/dir/`, a folder that does not exist) by method,
 * beside nginx 1.22: the index module (`ngx_http_index_handler`) takes GET,
 * HEAD and POST only; any other method goes on to the static module, which
 * answers 405 before it looks at the URI (`ngx_http_static_handler`), so a
 * CORS preflight to a location that serves files gets 405, not 403 or 404.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { htmlAhead, startNginxSite } from "./_nginx.ts";
import { freePort, rawRequest } from "./_utils.ts";
import { startMain } from "./_in_process.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

const SERVER = `
    root $HTML;
    location / { index index.html; }
    location ~ ^/(ISAPI|SDK)/ {
        if ($http_cookie ~ "proxy=(.+)") { return 200; }
    }
`;

const FILES = {
  "index.html": "<p>app</p>\n",
  "dir/index.html": "<p>dir</p>\n",
};

const METHODS = ["GET", "HEAD", "POST", "OPTIONS", "PUT", "DELETE", "PATCH"];
const TARGETS = ["/", "/dir/", "/nofolder/", "/ISAPI/"];

async function statusOf(port: number, method: string, target: string) {
  const raw = await rawRequest(
    port,
    `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
  );
  return raw.split(" ")[1];
}

htmlAhead([FILES]);

Deno.test(
  "a folder's URI gets nginx's status for every method",
  ON_LINUX,
  async () => {
    await using nginx = await startNginxSite({ server: SERVER, files: FILES });
    const port = freePort();
    const prefix = await Deno.makeTempDir({ prefix: "index-methods-" });
    try {
      await Deno.mkdir(join(prefix, "logs"));
      await Deno.mkdir(join(prefix, "conf"), { recursive: true });
      const conf = join(prefix, "conf", "nginx.conf");
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n error_log ${prefix}/logs/error.log;\n access_log off;\n server {\n listen 127.0.0.1:${port};\n server_name localhost;\n${
          SERVER.replaceAll("$HTML", nginx.root)
        }\n }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      const want: string[] = [];
      const got: string[] = [];
      for (const target of TARGETS) {
        for (const method of METHODS) {
          want.push(
            `${method} ${target}: ${await statusOf(
              nginx.port,
              method,
              target,
            )}`,
          );
          got.push(
            `${method} ${target}: ${await statusOf(gw.port, method, target)}`,
          );
        }
      }
      deepStrictEqual(got, want);
    } finally {
      await Deno.remove(prefix, { recursive: true });
    }
  },
);
