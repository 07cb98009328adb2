/**
 * `proxy_cookie_domain` and `proxy_cookie_path` beside nginx 1.22: the
 * same nginx.conf compiled for the gateway and run by nginx, one upstream
 * sending several `Set-Cookie` fields; the fields the client gets are
 * compared in order.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { startNginxServer } from "../_nginx.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { compileText } from "../engine/_conf.ts";
import { serveCompiled } from "./_location.ts";

const NEEDS = suiteNeeds("cookie_nginx_test.ts", ["nginx"]);

const COOKIES = [
  "sid=1; Path=/app/login; Domain=.Backend.Local; HttpOnly",
  "a=b;path=/ADMIN/x;domain=db.internal",
  "c=d; Path=/other; Domain=other.com",
  "flag; Path=/app/",
  "e=f;  Path = /legacy/z ;Secure",
  "g=h; Path=/app/; Path=/App/2; DOMAIN=backend.local",
  "i=j; Path=/app",
  "k=l; Domain=; Path",
];

function server(port: number): string {
  return `
    proxy_cookie_path /legacy/ /new/;
    location /a/ {
      proxy_pass http://127.0.0.1:${port}/;
      proxy_cookie_domain backend.local .station.example;
      proxy_cookie_domain ~\\.internal$ $host;
      proxy_cookie_path /app/ /a/;
      proxy_cookie_path ~*^/ADMIN(.*)$ /a/admin$1;
    }
    location /off/ { proxy_pass http://127.0.0.1:${port}/; proxy_cookie_path off; }
    location /inherit/ { proxy_pass http://127.0.0.1:${port}/; }
`;
}

Deno.test({
  name:
    "proxy_cookie_domain and proxy_cookie_path rewrite Set-Cookie as nginx 1.22",
  ...NEEDS,
  async fn() {
    await using up = startRawUpstream(async (conn) => {
      if (await readHead(conn) === null) return;
      await writeText(
        conn,
        `HTTP/1.1 200 OK\r\n${
          COOKIES.map((c) => `Set-Cookie: ${c}\r\n`).join("")
        }Content-Length: 2\r\nConnection: close\r\n\r\nok`,
      );
    });
    const text = server(up.port);
    await using nginx = await startNginxServer({ server: text });
    await using gw = serveCompiled(
      compileText(`http {\n server {\n listen 8081;\n${text}\n }\n}`),
    );
    const cookies = (raw: string) =>
      raw.split("\r\n\r\n")[0]!.split("\r\n").filter((l) =>
        /^set-cookie:/i.test(l)
      ).map((l) => l.slice(l.indexOf(":") + 1).trim());
    for (const path of ["/a/x", "/off/x", "/inherit/x"]) {
      const request =
        `GET ${path} HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n`;
      deepStrictEqual(
        cookies(await rawRequest(gw.port, request)),
        cookies(await rawRequest(nginx.port, request)),
        path,
      );
    }
  },
});
