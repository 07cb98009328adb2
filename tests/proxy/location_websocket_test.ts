import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { rawRequest, readHead, writeText } from "../_utils.ts";
import { implicitUpstream, locationConf, serveLocations } from "./_location.ts";

/** A WebSocket upstream that echoes, recording each request's fields. */
function echoUpstream() {
  const seen: {
    line: string;
    upgrade: string | null;
    connection: string | null;
  }[] = [];
  const keys: (string | null)[] = [];
  const sockets = new Set<WebSocket>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push({
        line: `${req.method} ${new URL(req.url).pathname}`,
        upgrade: req.headers.get("upgrade"),
        connection: req.headers.get("connection"),
      });
      keys.push(req.headers.get("sec-websocket-key"));
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
    keys,
    async [Symbol.asyncDispose]() {
      for (const s of sockets) s.close();
      await server.shutdown();
    },
  };
}

const WS_SET: [string, string][] = [
  ["Upgrade", "$http_upgrade"],
  ["Connection", "upgrade"],
];

Deno.test("proxyLocation() tunnels a WebSocket where the location asks for one (HTTP/1.0 too, as nginx)", async (t) => {
  for (const version of ["1.1", "1.0"] as const) {
    await t.step(`proxy_http_version ${version}`, () => tunnels(version));
  }
});

async function tunnels(version: "1.0" | "1.1"): Promise<void> {
  await using up = echoUpstream();
  const group = `127.0.0.1:${up.port}`;
  await using gw = serveLocations([
    locationConf({
      name: "/ws/",
      pass: `http://${group}/`,
      version,
      set: WS_SET,
    }),
  ], [implicitUpstream(group)]);
  const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/ws/chat`);
  const reply = new Promise<string>((resolve, reject) => {
    ws.onopen = () => ws.send("hi");
    ws.onmessage = (e) => resolve(String(e.data));
    ws.onerror = () => reject(new Error("WebSocket failed"));
  });
  const closed = new Promise((resolve) => ws.onclose = resolve);
  strictEqual(await reply, "echo:hi");
  ws.close();
  await closed;
  deepStrictEqual(up.seen[0], {
    line: "GET /chat",
    upgrade: "websocket",
    connection: "upgrade",
  });
}

Deno.test("proxyLocation() sends an Upgrade request as a plain one where the location does not ask", async () => {
  await using up = echoUpstream();
  const group = `127.0.0.1:${up.port}`;
  await using gw = serveLocations([
    locationConf({ name: "/api/", pass: `http://${group}/` }),
  ], [implicitUpstream(group)]);
  const text = await rawRequest(
    gw.port,
    "GET /api/chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  strictEqual(text.split("\r\n")[0], "HTTP/1.1 200 OK");
  deepStrictEqual(up.seen, [
    { line: "GET /chat", upgrade: null, connection: "close" },
  ]);
});

Deno.test("proxyLocation() sends the client's WebSocket key upstream, as nginx", async () => {
  await using up = echoUpstream();
  const group = `127.0.0.1:${up.port}`;
  await using gw = serveLocations([
    locationConf({
      name: "/ws/",
      pass: `http://${group}/`,
      version: "1.1",
      set: WS_SET,
    }),
  ], [implicitUpstream(group)]);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
  try {
    await writeText(
      conn,
      "GET /ws/chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    const head = await readHead(conn);
    strictEqual(head?.split("\r\n")[0], "HTTP/1.1 101 Switching Protocols");
  } finally {
    conn.close();
  }
  deepStrictEqual(up.keys, ["dGhlIHNhbXBsZSBub25jZQ=="]);
});
