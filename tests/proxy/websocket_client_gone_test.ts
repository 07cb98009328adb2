/**
 * WebSocket handshakes whose client closes as soon as it has sent them:
 * every upstream connection the gateway opened for them is closed, however
 * the client's close falls against the connect (nginx closes it,
 * ngx_http_upstream_check_broken_connection). A connect aborted as it
 * completed left its socket in the runtime with no owner, in CLOSE-WAIT
 * for good once the upstream gave up (about half of a hundred).
 */
import { strictEqual } from "node:assert/strict";
import { spawnGateway, startRawUpstream, waitFor } from "../_utils.ts";
import { nginxPrefix } from "../_prefix.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/**
 * The gateway's open descriptors: `/proc/PID/fd` listed by `ls` (Deno lets
 * only an `--allow-all` process read `/proc` itself).
 */
async function descriptors(pid: number): Promise<number> {
  const out = await new Deno.Command("ls", { args: ["-1", `/proc/${pid}/fd`] })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l)
    .length;
}

Deno.test(
  "a WebSocket client gone at once leaves no upstream connection open",
  ON_LINUX,
  async () => {
    // Answers 101 to any handshake, then holds the connection until the
    // gateway closes it.
    await using up = startRawUpstream(async (conn) => {
      const buf = new Uint8Array(4096);
      let head = "";
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) return;
        head += new TextDecoder().decode(buf.subarray(0, n));
      }
      await conn.write(
        new TextEncoder().encode(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
        ),
      ).catch(() => 0);
      while (await conn.read(buf).catch(() => null) !== null) { /* held */ }
    });
    await using p = await nginxPrefix(`events {}
http {
  access_log logs/access.log;
  server {
    listen 127.0.0.1:0;
    location /ws/ {
      proxy_pass http://127.0.0.1:${up.port};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_read_timeout 60s;
    }
  }
}
`);
    await using gw = await spawnGateway(["--nginx-conf", p.conf]);
    const pid = gw.child.pid;
    const before = await descriptors(pid);
    const handshake = new TextEncoder().encode(
      "GET /ws/hi HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    const count = 100;
    for (let i = 0; i < count; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
      await conn.write(handshake);
      conn.close();
    }
    // Every request ends in its access line; then every descriptor it took
    // is given back (a tunnel whose client never opened would wait for
    // proxy_read_timeout, far past this bound).
    const log = `${p.prefix}/logs/access.log`;
    const lines = () => {
      try {
        return Deno.readTextFileSync(log).split("\n").filter((l) => l).length;
      } catch {
        return 0;
      }
    };
    await waitFor(() => lines() >= count, 20_000);
    // Polled as `waitFor` polls, bounded: the closes follow the lines.
    let open = await descriptors(pid);
    for (let i = 0; i < 200 && open > before; i++) {
      await new Promise((r) => setTimeout(r, 50));
      open = await descriptors(pid);
    }
    strictEqual(open, before);
  },
);
