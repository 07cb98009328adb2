/**
 * `proxy_buffering off` beside nginx 1.22: an event stream whose upstream
 * sends each event only once the client has read the one before, so the
 * stream ends only where every event is relayed at once, gzipped or not
 * (nginx flushes the gzip filter on each upstream read).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { constants, gunzipSync } from "node:zlib";
import { join } from "node:path";
import { startNginxServer } from "../_nginx.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { freePort, readHead, startRawUpstream, writeText } from "../_utils.ts";
import { startMain } from "../_in_process.ts";

const NEEDS = suiteNeeds("proxy_buffering_nginx_test.ts", ["nginx"]);

const EVENTS = ["data: one\n\n", "data: two\n\n", "data: three\n\n"];

function server(upstream: number): string {
  return `
    gzip_types text/event-stream;
    location /sse/ { proxy_pass http://127.0.0.1:${upstream}/; proxy_buffering off; }
    location /gz/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      proxy_buffering off;
      gzip on;
      gzip_min_length 1;
    }
`;
}

/** What a client has of a response so far. */
class Progress {
  bytes = new Uint8Array(0);
  add(more: Uint8Array): void {
    const all = new Uint8Array(this.bytes.length + more.length);
    all.set(this.bytes);
    all.set(more, this.bytes.length);
    this.bytes = all;
  }
  get headEnd(): number {
    const text = new TextDecoder("latin1").decode(this.bytes);
    return text.indexOf("\r\n\r\n");
  }
  get fields(): string[] {
    const head = new TextDecoder().decode(this.bytes.subarray(0, this.headEnd));
    return head.split("\r\n").slice(1).map((l) => l.toLowerCase())
      .filter((l) => !/^(server|date|connection):/.test(l)).sort();
  }
  /** The complete chunks' data, inflated as far as it goes when gzipped. */
  get text(): string {
    if (this.headEnd < 0) return "";
    const raw = this.bytes.subarray(this.headEnd + 4);
    const data: number[] = [];
    let at = 0;
    for (let i = 0; i < 1000; i++) {
      const eol = raw.indexOf(13, at);
      if (eol < 0) break;
      const size = parseInt(
        new TextDecoder().decode(raw.subarray(at, eol)),
        16,
      );
      if (!(size > 0) || eol + 2 + size + 2 > raw.length) break;
      data.push(...raw.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    let body: Uint8Array = new Uint8Array(data);
    if (this.fields.includes("content-encoding: gzip")) {
      try {
        body = gunzipSync(body, { finishFlush: constants.Z_SYNC_FLUSH });
      } catch {
        body = new Uint8Array(0);
      }
    }
    return new TextDecoder().decode(body);
  }
}

Deno.test({
  name:
    "proxy_buffering off relays each upstream read at once, gzipped or not, as nginx 1.22",
  ...NEEDS,
  async fn() {
    // The upstream sends an event once the client has the ones before it.
    let delivered = Promise.withResolvers<void>();
    await using up = startRawUpstream(async (conn) => {
      if (await readHead(conn) === null) return;
      await writeText(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" +
          "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      );
      for (const event of EVENTS) {
        await writeText(conn, `${event.length.toString(16)}\r\n${event}\r\n`);
        await delivered.promise;
      }
      await writeText(conn, "0\r\n\r\n");
    });
    await using nginx = await startNginxServer({ server: server(up.port) });
    const dir = await Deno.makeTempDir({ prefix: "buffering-" });
    try {
      const port = freePort();
      await Deno.mkdir(join(dir, "logs"), { recursive: true });
      await Deno.mkdir(join(dir, "conf"), { recursive: true });
      const conf = join(dir, "conf", "nginx.conf");
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n  error_log ${dir}/error.log;\n  access_log off;\n  server {\n    listen 127.0.0.1:${port};\n${
          server(up.port)
        }\n  }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      for (const path of ["/sse/events", "/gz/events"]) {
        const seen: Record<string, string[]> = {};
        const heads: Record<string, string[]> = {};
        for (
          const [who, target] of [["nginx", nginx.port], [
            "gateway",
            gw.port,
          ]] as const
        ) {
          const conn = await Deno.connect({
            hostname: "127.0.0.1",
            port: target,
          });
          const timer = setTimeout(() => conn.close(), 10_000);
          const progress = new Progress();
          const texts: string[] = [];
          try {
            await writeText(
              conn,
              `GET ${path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n`,
            );
            const buf = new Uint8Array(16 * 1024);
            let next = 0;
            for (let i = 0; i < 1000 && next < EVENTS.length; i++) {
              const n = await conn.read(buf);
              if (n === null) break;
              progress.add(buf.subarray(0, n));
              const want = EVENTS.slice(0, next + 1).join("");
              if (progress.text === want) {
                texts.push(progress.text);
                next++;
                // Only now may the upstream send the next event.
                const d = delivered;
                delivered = Promise.withResolvers<void>();
                d.resolve();
              }
            }
          } finally {
            clearTimeout(timer);
            try {
              conn.close();
            } catch { /* closed by the timer */ }
          }
          seen[who] = texts;
          heads[who] = progress.fields;
        }
        deepStrictEqual(seen.gateway, seen.nginx, path);
        strictEqual(seen.nginx!.length, EVENTS.length, path);
        deepStrictEqual(heads.gateway, heads.nginx, path);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
