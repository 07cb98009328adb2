/**
 * The WebSocket idiom of real station files (`map $http_upgrade
 * $connection_upgrade`, `proxy_http_version 1.1`, `Upgrade` and `Connection`
 * set) in a real gateway started from the file, beside nginx 1.22: both tunnel,
 * the upstream sees the same upgrade fields; a location without the idiom sends
 * the upgrade as a plain request in both.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { freePort, rawRequest } from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { startNginxServer } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";

/** An echoing WebSocket upstream that records each request's fields. */
function echoUpstream() {
  const seen: string[] = [];
  const sockets = new Set<WebSocket>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push(
        [
          new URL(req.url).pathname,
          req.headers.get("upgrade"),
          req.headers.get("connection"),
        ].join(" "),
      );
      if (req.headers.get("upgrade") !== "websocket") {
        return new Response("plain");
      }
      const { socket, response } = Deno.upgradeWebSocket(req);
      sockets.add(socket);
      socket.onmessage = (e) => socket.send(`echo:${e.data}`);
      socket.onclose = () => sockets.delete(socket);
      return response;
    },
  );
  return {
    port: server.addr.port,
    seen,
    async [Symbol.asyncDispose]() {
      for (const s of sockets) s.close();
      await server.shutdown();
    },
  };
}

const HTTP = `  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' close;
  }`;

function server(port: number): string {
  return `
    location /ws/ {
      proxy_pass http://127.0.0.1:${port}/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
    }
    location /api/ { proxy_pass http://127.0.0.1:${port}/; }
`;
}

/** Opens a WebSocket, sends one message and returns the answer. */
async function echo(url: string): Promise<string> {
  const ws = new WebSocket(url);
  const closed = new Promise((resolve) => ws.onclose = resolve);
  try {
    return await new Promise<string>((resolve, reject) => {
      ws.onopen = () => ws.send("hi");
      ws.onmessage = (e) => resolve(String(e.data));
      ws.onerror = () => reject(new Error(`WebSocket to ${url} failed`));
    });
  } finally {
    ws.close();
    await closed;
  }
}

Deno.test("the map $connection_upgrade idiom tunnels a WebSocket as nginx 1.22 does", async () => {
  await using up = echoUpstream();
  await using nginx = await startNginxServer({
    http: HTTP,
    server: server(up.port),
  });
  const port = freePort();
  await using p = await nginxPrefix(
    `events {}\nhttp {\n access_log off;\n${HTTP}\n server {\n listen 127.0.0.1:${port};\n${
      server(up.port)
    }\n }\n}\n`,
    { name: "eproxy-ws-" },
  );
  await using gw = await startMain(["--nginx-conf", p.conf]);
  strictEqual(await echo(`ws://127.0.0.1:${nginx.port}/ws/chat`), "echo:hi");
  strictEqual(await echo(`ws://127.0.0.1:${gw.port}/ws/chat`), "echo:hi");
  const upgrade = (p: number) =>
    rawRequest(
      p,
      "GET /api/chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
  const status = (raw: string) => raw.split("\r\n")[0];
  strictEqual(
    status(await upgrade(gw.port)),
    status(await upgrade(nginx.port)),
  );
  deepStrictEqual(up.seen, [
    "/chat websocket upgrade",
    "/chat websocket upgrade",
    "/chat  close",
    "/chat  close",
  ]);
});
