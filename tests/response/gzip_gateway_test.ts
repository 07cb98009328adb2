/**
 * The gzip filter in a gateway started from its nginx.conf, where nginx has
 * nothing to compare: a client that leaves in the middle of a long compressed
 * answer closes the upstream connection, and the request is logged without an
 * alert; an answer that came whole is deflated in one piece, unless
 * `proxy_buffering off` asks for a flush per upstream read.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  freePort,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { request } from "./_raw_exchange.ts";

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
    const port = freePort();
    await Deno.mkdir(join(dir, "logs"), { recursive: true });
    await Deno.mkdir(join(dir, "conf"), { recursive: true });
    const conf = join(dir, "conf", "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}\nhttp {\n  error_log ${dir}/error.log info;\n  access_log ${dir}/access.log;\n  gzip on;\n  gzip_types text/plain;\n  server {\n    listen 127.0.0.1:${port};\n    location / { proxy_pass http://127.0.0.1:${up.port}; }\n  }\n}\n`,
    );
    await using gw = await startMain(["--nginx-conf", conf]);
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

Deno.test("a proxied answer that came whole is gzipped in one piece, flushed under proxy_buffering off", async () => {
  const json = JSON.stringify(
    Array.from({ length: 60 }, (_, i) => ({ id: i, state: `s${i % 3}` })),
  );
  await using up = startRawUpstream(async (conn) => {
    if (await readHead(conn) === null) return;
    // Head and body in one write: the body arrives whole with the head.
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`,
    );
  });
  const dir = await Deno.makeTempDir({ prefix: "gzip-gw-" });
  try {
    const port = freePort();
    await Deno.mkdir(join(dir, "logs"), { recursive: true });
    await Deno.mkdir(join(dir, "conf"), { recursive: true });
    const conf = join(dir, "conf", "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}\nhttp {\n  error_log ${dir}/error.log;\n  access_log off;\n  gzip on;\n  gzip_types application/json;\n  server {\n    listen 127.0.0.1:${port};\n    location /b/ { proxy_pass http://127.0.0.1:${up.port}/; }\n    location /u/ { proxy_pass http://127.0.0.1:${up.port}/; proxy_buffering off; }\n  }\n}\n`,
    );
    await using gw = await startMain(["--nginx-conf", conf]);
    const ask = (path: string) =>
      request(
        gw.port,
        `GET ${path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip`,
      );
    const buffered = await ask("/b/data.json");
    const unbuffered = await ask("/u/data.json");
    for (const read of [buffered, unbuffered]) {
      ok(read.fields.includes("content-encoding: gzip"), read.fields.join());
      strictEqual(read.body, json);
    }
    // nginx flushes the gzip filter on each upstream read without
    // buffering: a sync flush and a second chunk make the body longer.
    ok(
      unbuffered.wire > buffered.wire,
      `${unbuffered.wire} > ${buffered.wire}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
