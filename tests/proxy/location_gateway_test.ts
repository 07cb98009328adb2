/**
 * An nginx.conf with several proxied locations, run by a real gateway started
 * from it as main() starts it, beside nginx 1.22 on the same upstream: what the
 * upstream receives and the lines the gateway writes.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  freePort,
  maskErrorLine,
  rawRequest,
  readHead,
  refusedPort,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { startNginxServer } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";

const OK =
  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
const MISSING =
  "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine";

function server(a: number, b: number, refused: number): string {
  return `
    location /api/ {
      proxy_pass http://backend/;
      proxy_set_header Host $host;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
    location /prod-api/ {
      rewrite ^/prod-api/(.*)$ /$1 break;
      proxy_pass http://127.0.0.1:${b};
    }
    location /admin { proxy_pass http://127.0.0.1:${a}/manage; }
    location /down/ { proxy_pass http://127.0.0.1:${refused}/; }
    location /i/ {
      proxy_pass http://backend/;
      proxy_intercept_errors on;
      error_page 401 404 = /fallback;
    }
    location /n/ { proxy_pass http://backend/; error_page 404 = /fallback; }
    location = /fallback { return 200 "fallback\\n"; }
`;
}

Deno.test("an nginx.conf's proxied locations reach their groups as with nginx 1.22", async () => {
  await using a = startRawUpstream(async (conn, _i, up) => {
    const head = await readHead(conn);
    if (head === null) return;
    up.heads.push(head);
    await writeText(conn, head.startsWith("GET /missing") ? MISSING : OK);
  });
  await using b = startRawUpstream(async (conn, _i, up) => {
    const head = await readHead(conn);
    if (head === null) return;
    up.heads.push(head);
    await writeText(conn, OK);
  });
  const refused = refusedPort();
  const http = `  upstream backend { server 127.0.0.1:${a.port}; }`;
  await using nginx = await startNginxServer({
    http,
    server: server(a.port, b.port, refused),
  });
  const port = freePort();
  await using p = await nginxPrefix(
    (prefix) =>
      `events {}\nhttp {\n error_log ${prefix}/logs/error.log;\n access_log off;\n${http}\n server {\n listen 127.0.0.1:${port};\n server_name localhost;\n${
        server(a.port, b.port, refused)
      }\n }\n}\n`,
    { name: "eproxy-gw-" },
  );
  await using gw = await startMain(["--nginx-conf", p.conf]);
  const targets = [
    ["/api/user/login?x=1", a],
    ["/prod-api/system/menu%41", b],
    ["/admin/users", a],
  ] as const;
  for (const [target, up] of targets) {
    const request =
      `GET ${target} HTTP/1.1\r\nHost: station.local:8081\r\nAccept: */*\r\nConnection: close\r\n\r\n`;
    const before = up.heads.length;
    const theirs = await rawRequest(nginx.port, request);
    const ours = await rawRequest(gw.port, request);
    strictEqual(ours.split("\r\n")[0], theirs.split("\r\n")[0], target);
    strictEqual(up.heads.length, before + 2, target);
    const lines = (h: string) =>
      h.split("\r\n\r\n")[0]!.split("\r\n").map((l) => l.toLowerCase())
        .sort();
    deepStrictEqual(
      lines(up.heads[before + 1]!),
      lines(up.heads[before]!),
      target,
    );
  }
  for (const target of ["/i/missing", "/n/missing"]) {
    const request =
      `GET ${target} HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n`;
    const answer = (raw: string) =>
      `${raw.split("\r\n")[0]} ${raw.split("\r\n\r\n")[1]}`;
    strictEqual(
      answer(await rawRequest(gw.port, request)),
      answer(await rawRequest(nginx.port, request)),
      target,
    );
  }
  const down =
    "GET /down/x HTTP/1.1\r\nHost: station.local\r\nConnection: close\r\n\r\n";
  strictEqual(
    (await rawRequest(gw.port, down)).split("\r\n")[0],
    "HTTP/1.1 502 Bad Gateway",
  );
  await rawRequest(nginx.port, down);
  const connectLine = (lines: string[]) =>
    lines.map(maskErrorLine).find((l) => l.includes("connect() failed"));
  const log = join(p.prefix, "logs", "error.log");
  await waitFor(() => {
    try {
      return Deno.readTextFileSync(log).includes("connect() failed");
    } catch {
      return false;
    }
  });
  const ourLine = connectLine((await Deno.readTextFile(log)).split("\n"));
  ok(ourLine, "the gateway's connect() line");
  strictEqual(ourLine, connectLine(nginx.errorLines()));
});
