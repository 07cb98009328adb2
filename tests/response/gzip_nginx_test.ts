/**
 * The gzip filter beside nginx 1.22: one nginx.conf run by nginx and by a
 * gateway (started from it as main() starts it), on the same files and the same
 * upstream. Per request: the status, every field the client sees (`Server`,
 * `Date`, `Connection` aside), the body after decoding, and `$body_bytes_sent`.
 * The compressed bytes themselves differ (nginx links the system's zlib, Deno's
 * `node:zlib` another deflate), so a compressed body's logged count is checked
 * against what reached the client, chunk framing included, on each side.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { htmlAhead, startNginxSite } from "../_nginx.ts";
import { findBlank, type Read, request } from "./_raw_exchange.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import {
  freePort,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";

const NEEDS = suiteNeeds("gzip_nginx_test.ts", ["nginx"]);

const encode = (text: string) => new TextEncoder().encode(text);

/** Text that compresses as a page or a script does, not as one repeated byte. */
function text(size: number, seed: string): string {
  let out = "";
  for (let i = 0; out.length < size; i++) {
    out += `${seed}${i} = { id: ${i * 7919 % 1009}, name: "n${i % 97}" };\n`;
  }
  return out.slice(0, size);
}

const HTML = `<!doctype html><html><body>${text(2300, "p")}</body></html>`;
const JS = text(20_035, "var v");
const JSON_BODY = JSON.stringify({ rows: text(5_000, "r").split("\n") });

const FILES: Record<string, string | Uint8Array> = {
  "index.html": HTML,
  "app.js": JS,
  "small.js": "var a = 1;\n",
  "data.json": JSON_BODY,
  "gs/app.js": JS,
  "gs/app.js.gz": gzipSync(JS),
};

/** The upstream's answers, by path. */
function answer(path: string): Uint8Array {
  const plain = (type: string, body: string, extra = "") =>
    encode(
      `HTTP/1.1 200 OK\r\nContent-Type: ${type}\r\nContent-Length: ${
        encode(body).length
      }\r\n${extra}Connection: close\r\n\r\n${body}`,
    );
  switch (path) {
    case "/page.html":
      return plain("text/html", HTML, 'ETag: "up-1"\r\n');
    case "/app.js": {
      // Chunked: the length is not known in advance.
      const body = encode(JS);
      const head = encode(
        "HTTP/1.1 200 OK\r\nContent-Type: application/javascript\r\n" +
          "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      );
      const half = body.length >> 1;
      const chunk = (b: Uint8Array) => [
        ...encode(`${b.length.toString(16)}\r\n`),
        ...b,
        ...encode("\r\n"),
      ];
      return new Uint8Array([
        ...head,
        ...chunk(body.subarray(0, half)),
        ...chunk(body.subarray(half)),
        ...encode("0\r\n\r\n"),
      ]);
    }
    case "/data.json":
      return plain("application/json; charset=utf-8", JSON_BODY);
    case "/small.json":
      return plain("application/json", '{"ok":true}');
    case "/private.json":
      return plain("application/json", JSON_BODY, "Cache-Control: private\r\n");
    case "/stored.json":
      return plain(
        "application/json",
        JSON_BODY,
        "Cache-Control: max-age=60\r\n",
      );
    case "/encoded.json": {
      const gz = gzipSync(JSON_BODY);
      return new Uint8Array([
        ...encode(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
            `Content-Encoding: gzip\r\nContent-Length: ${gz.length}\r\nConnection: close\r\n\r\n`,
        ),
        ...gz,
      ]);
    }
    case "/partial.json":
      return encode(
        "HTTP/1.1 206 Partial Content\r\nContent-Type: application/json\r\n" +
          `Content-Range: bytes 0-1999/5000\r\nContent-Length: 2000\r\nConnection: close\r\n\r\n${
            JSON_BODY.slice(0, 2000)
          }`,
      );
    default:
      return encode(
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
      );
  }
}

function server(root: string, upstream: number, log: string): string {
  return `
    access_log ${log} bytes;
    root ${root};
    types {
      text/html html;
      application/javascript js;
      application/json json;
    }
    gzip on;
    gzip_types application/javascript application/json;
    gzip_min_length 1000;
    gzip_vary on;
    location /e/ { gzip_min_length 20; }
    location /gs/ { gzip_static on; }
    location /l6/ { alias ${root}/; gzip_comp_level 6; }
    location /off/ { alias ${root}/; gzip off; }
    location /dis/ { alias ${root}/; gzip_disable "^curl/" msie6; }
    location /v10/ { alias ${root}/; gzip_http_version 1.0; }
    location /api/ { proxy_pass http://127.0.0.1:${upstream}/; }
    location /any/ { proxy_pass http://127.0.0.1:${upstream}/; gzip_proxied any; }
    location /apx/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      gzip_proxied no-cache private auth;
    }
    location /exp/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      expires 1h;
      gzip_proxied expired;
    }
`;
}

/** Requests: what each checks, and the head. */
const CASES: [string, string][] = [
  ["static HTML", "GET /index.html HTTP/1.1"],
  ["static script", "GET /app.js HTTP/1.1"],
  ["static script, level 6", "GET /l6/app.js HTTP/1.1"],
  ["under gzip_min_length", "GET /small.js HTTP/1.1"],
  [
    "a range: the whole file gzipped",
    "GET /app.js HTTP/1.1\r\nRange: bytes=0-99",
  ],
  ["HEAD", "HEAD /app.js HTTP/1.1"],
  ["gzip off", "GET /off/app.js HTTP/1.1"],
  ["gzip_static's .gz, not compressed again", "GET /gs/app.js HTTP/1.1"],
  [
    "gzip_static and gzip, a client without gzip: one Vary",
    "GET /gs/app.js HTTP/1.1\r\nAccept-Encoding: br",
  ],
  ["no gzip in Accept-Encoding", "GET /app.js HTTP/1.1\r\nAccept-Encoding: br"],
  ["gzip;q=0", "GET /app.js HTTP/1.1\r\nAccept-Encoding: gzip;q=0, br"],
  [
    "If-None-Match with the weak tag",
    "GET /app.js HTTP/1.1\r\nIf-None-Match: $ETAG",
  ],
  [
    "gzip_disable on User-Agent",
    "GET /dis/app.js HTTP/1.1\r\nUser-Agent: curl/8.0",
  ],
  [
    "gzip_disable msie6",
    "GET /dis/app.js HTTP/1.1\r\nUser-Agent: Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
  ],
  ["a 404 page under gzip_min_length", "GET /missing.html HTTP/1.1"],
  ["a 404 page gzipped", "GET /e/missing.html HTTP/1.1"],
  ["proxied HTML with a strong ETag", "GET /api/page.html HTTP/1.1"],
  ["proxied chunked script", "GET /api/app.js HTTP/1.1"],
  ["proxied JSON with a charset", "GET /api/data.json HTTP/1.1"],
  ["proxied JSON under gzip_min_length", "GET /api/small.json HTTP/1.1"],
  ["proxied answer already encoded", "GET /api/encoded.json HTTP/1.1"],
  ["proxied 206", "GET /api/partial.json HTTP/1.1"],
  ["proxied HEAD", "HEAD /api/data.json HTTP/1.1"],
  [
    "Via under gzip_proxied off",
    "GET /api/data.json HTTP/1.1\r\nVia: 1.1 proxy",
  ],
  [
    "Via under gzip_proxied any",
    "GET /any/data.json HTTP/1.1\r\nVia: 1.1 proxy",
  ],
  ["Via, private", "GET /apx/private.json HTTP/1.1\r\nVia: 1.1 proxy"],
  ["Via, max-age only", "GET /apx/stored.json HTTP/1.1\r\nVia: 1.1 proxy"],
  ["Via, no Cache-Control", "GET /apx/data.json HTTP/1.1\r\nVia: 1.1 proxy"],
  [
    "Via with Authorization under auth",
    "GET /apx/stored.json HTTP/1.1\r\nVia: 1.1 proxy\r\nAuthorization: Basic eDp5",
  ],
  // The headers filter runs before gzip: its Expires is what gzip_proxied reads.
  ["Via, expires 1h", "GET /exp/data.json HTTP/1.1\r\nVia: 1.1 proxy"],
];

htmlAhead([FILES]);

Deno.test({
  name: "gzip compresses static and proxied answers as nginx 1.22 does",
  ...NEEDS,
  async fn() {
    await using up = startRawUpstream(async (conn) => {
      const head = await readHead(conn);
      if (head === null) return;
      const path = head.split(" ")[1]!;
      const bytes = answer(path);
      const body = head.startsWith("HEAD")
        ? bytes.subarray(0, findBlank(bytes) + 4)
        : bytes;
      let n = 0;
      while (n < body.length) n += await conn.write(body.subarray(n));
      await writeText(conn, "");
    });
    const logs = await Deno.makeTempDir({ prefix: "gzip-logs-" });
    const format = `log_format bytes '$request $status $body_bytes_sent';`;
    try {
      await using nginx = await startNginxSite({
        http: [format],
        server: server("$HTML", up.port, join(logs, "nginx.log")),
        files: FILES,
      });
      await Deno.mkdir(join(logs, "logs"), { recursive: true });
      await Deno.mkdir(join(logs, "conf"), { recursive: true });
      const conf = join(logs, "conf", "gateway.conf");
      const port = freePort();
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n  error_log ${logs}/error.log;\n  ${format}\n  server {\n    listen 127.0.0.1:${port};\n    server_name localhost;\n${
          server(nginx.root, up.port, join(logs, "gateway.log"))
        }\n  }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      // nginx's ETag: the file's mtime and size in hex.
      const info = Deno.statSync(join(nginx.root, "app.js"));
      const etag = `"${Math.floor(info.mtime!.getTime() / 1000).toString(16)}-${
        info.size.toString(16)
      }"`;
      const wires: [number, number][] = [];
      for (const [what, line] of CASES) {
        const head =
          `${line.replace("$ETAG", `W/${etag}`)}\r\nHost: station.local` +
          (line.includes("Accept-Encoding")
            ? ""
            : "\r\nAccept-Encoding: gzip, deflate, br");
        const theirs = await request(nginx.port, head);
        const ours = await request(gw.port, head);
        strictEqual(ours.status, theirs.status, what);
        deepStrictEqual(
          ours.fields.filter((f) =>
            !what.startsWith("a 404") || !f.startsWith("content-length")
          ),
          theirs.fields.filter((f) =>
            !what.startsWith("a 404") || !f.startsWith("content-length")
          ),
          what,
        );
        // The error pages' footers name their server (a named difference).
        const footer = (body: string) =>
          body.replace(/<hr><center>[^<]*<\/center>/, "<hr>");
        strictEqual(footer(ours.body), footer(theirs.body), what);
        wires.push([theirs.wire, ours.wire]);
      }
      const bytesSent = (file: string) =>
        Deno.readTextFileSync(file).trim().split("\n").map((l) =>
          Number(l.split(" ").at(-1))
        );
      await waitFor(() => {
        try {
          return bytesSent(join(logs, "gateway.log")).length === CASES.length;
        } catch {
          return false;
        }
      });
      const theirs = bytesSent(join(logs, "nginx.log"));
      const ours = bytesSent(join(logs, "gateway.log"));
      for (let i = 0; i < CASES.length; i++) {
        const [what] = CASES[i]!;
        const [theirWire, ourWire] = wires[i]!;
        strictEqual(theirs[i], theirWire, `nginx: ${what}`);
        strictEqual(ours[i], ourWire, what);
      }
      ok(ours[1]! < JS.length / 2, "the script's logged bytes are compressed");
      // gzip-http10 (a named difference): Deno.serve does not tell an
      // HTTP/1.0 request from 1.1, so gzip_http_version 1.1 cannot decline it.
      const http10 = "GET /app.js HTTP/1.0\r\nHost: x\r\nAccept-Encoding: gzip";
      const encoding = (r: Read) =>
        r.fields.find((f) => f.startsWith("content-encoding:")) ?? null;
      strictEqual(encoding(await request(nginx.port, http10)), null);
      strictEqual(
        encoding(await request(gw.port, http10)),
        "content-encoding: gzip",
      );
    } finally {
      await Deno.remove(logs, { recursive: true });
    }
  },
});
