/**
 * The gzip filter in a gateway process, where nginx has nothing to compare:
 * a client that leaves in the middle of a long compressed answer closes
 * the upstream connection, and the request is logged without an alert.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  readHead,
  refusedPort,
  spawnGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";

Deno.test("a client leaving a long gzipped answer closes the upstream and is logged", async () => {
  const upstreamDone = Promise.withResolvers<number>();
  await using up = startRawUpstream(async (conn) => {
    if (await readHead(conn) === null) return;
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" +
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    let line = "";
    for (let i = 0; line.length < 16 * 1024; i++) line += `${i * 7919} `;
    const chunk = `${line.length.toString(16)}\r\n${line}\r\n`;
    let sent = 0;
    try {
      // Bounded: the gateway stops reading once its client is gone.
      for (; sent < 100_000; sent++) await writeText(conn, chunk);
    } catch {
      // The gateway closed the connection.
    }
    upstreamDone.resolve(sent);
  });
  const dir = await Deno.makeTempDir({ prefix: "gzip-gw-" });
  try {
    const port = refusedPort();
    const conf = join(dir, "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}\nhttp {\n  error_log ${dir}/error.log info;\n  access_log ${dir}/access.log;\n  gzip on;\n  gzip_types text/plain;\n  server {\n    listen 127.0.0.1:${port};\n    location / { proxy_pass http://127.0.0.1:${up.port}; }\n  }\n}\n`,
    );
    await using gw = await spawnGateway(["--nginx-conf", conf]);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    await writeText(
      conn,
      "GET /long HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n",
    );
    const buf = new Uint8Array(64 * 1024);
    let got = "";
    for (let i = 0; i < 100 && !got.includes("\r\n\r\n"); i++) {
      const n = await conn.read(buf);
      if (n === null) break;
      got += new TextDecoder("latin1").decode(buf.subarray(0, n));
    }
    ok(/content-encoding: gzip/i.test(got), got.slice(0, 300));
    conn.close();
    const sent = await upstreamDone.promise;
    ok(sent < 100_000, "the upstream connection was closed");
    const access = join(dir, "access.log");
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(access).includes("GET /long");
      } catch {
        return false;
      }
    });
    strictEqual(/" 200 \d+ /.test(await Deno.readTextFile(access)), true);
    const errors = await Deno.readTextFile(join(dir, "error.log"));
    strictEqual(/\[(alert|crit|emerg)\]/.test(errors), false, errors);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
