/**
 * The SSI filter at its edges, in a gateway started from its nginx.conf or
 * on a page and includes made in the test: a WebSocket tunnel under
 * `ssi_types *` passes untouched, a client that leaves while an include is
 * pending or kept ends the page (nothing more runs, the include's body is
 * released), and an include that fails is logged and, failing mid-body,
 * cuts the page as `ngx_http_terminate_request` does.
 */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort } from "../_utils.ts";
import { startMain } from "../_in_process.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("a WebSocket under ssi_types * is switched as without SSI", async () => {
  const sockets = new Set<WebSocket>();
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      sockets.add(socket);
      socket.onmessage = (e) => socket.send(`echo:${e.data}`);
      socket.onclose = () => sockets.delete(socket);
      return response;
    },
  );
  const dir = await Deno.makeTempDir({ prefix: "ssi-ws-" });
  try {
    const port = freePort();
    const conf = join(dir, "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}
http {
  error_log ${dir}/error.log info;
  server {
    listen 127.0.0.1:${port};
    ssi on;
    ssi_types *;
    location /ws/ {
      proxy_pass http://127.0.0.1:${upstream.addr.port}/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection upgrade;
    }
  }
}
`,
    );
    await using gw = await startMain(["--nginx-conf", conf]);
    // A raw client: a gateway that fails the upgrade answers nothing, and
    // the timer bounds the wait for it.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    const timer = setTimeout(() => conn.close(), 10_000);
    let head = "";
    try {
      await conn.write(bytes(
        "GET /ws/ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n" +
          "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      ));
      const buf = new Uint8Array(4096);
      // Bounded by the timer, which closes the connection.
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        head += new TextDecoder().decode(buf.subarray(0, n));
      }
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch {
        // closed by the timer
      }
    }
    strictEqual(head.split("\r\n")[0], "HTTP/1.1 101 Switching Protocols");
  } finally {
    for (const s of sockets) s.close();
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
