/**
 * The benchmark's reference floor (`deno task bench --floor`): the least
 * HTTP work a `Deno.serve` proxy can do, with the same runtime and flags as
 * the gateway. It forwards every client field unfiltered over a pooled
 * `Deno.connect` connection, frames the body by `Content-Length` only, and
 * has no timeouts, error handling, logging or header rules. It is not a
 * proxy anyone should run; it measures what `Deno.serve` itself costs, so
 * the gateway's own cost per request can be told apart from the runtime's.
 *
 * With `tls` it is the TLS scenarios' floor (`deno-min-tls`): it listens
 * with TLS and answers `GET /2k.html` with the file's bytes from memory, as
 * `Transfer-Encoding: chunked`: the framing in which Deno writes head and
 * body at once over TLS, where it leaves Nagle's algorithm on
 * (src/response/tls_one_write.ts).
 *
 * With `tls-file` it is the floor of the TLS static scenarios that does the
 * file work nginx does per request (`deno-min-tls-file`): nginx without
 * `open_file_cache` (its default) opens the file, `fstat`s it, reads it
 * and closes it for every request (`strace`: `openat`, `newfstatat`,
 * `pread64`, `close` around the one `write`), and the benchmark's
 * nginx.conf writes no access line. This mode makes the same four system
 * calls through the fewest runtime calls that do them (`Deno.openSync`,
 * `statSync`, `readSync`, `close`: 12.5 µs a request in a loop, against
 * 17.2 for `Deno.statSync` and `Deno.readFileSync`, which make six), and
 * answers with the fields the gateway sends for a file (nginx's, less
 * `Server`): `ETag` and `Last-Modified` from that `fstat`, the type, the
 * length, `Accept-Ranges`, framed chunked as above. The date text of
 * `Last-Modified` is remembered for the last modification time.
 *
 * With `gzip` it is the floor of the compression scenarios: a JSON answer
 * is gzipped as nginx's `gzip on; gzip_types application/json` would (the
 * client accepts gzip, the body is at least `gzip_min_length`'s 20 bytes),
 * by `node:zlib` in one call on the body already whole, with nginx's
 * smaller window for a short body (`zlib`), or through `CompressionStream`
 * (`stream`: no level, zlib's default 6).
 *
 * Usage: `deno run --allow-net --allow-read scripts/bench_min_proxy.ts
 * <port> <upstream port> [tls <certificate> <key> <file> | tls-file
 * <certificate> <key> <root> | gzip <level> zlib|stream]`
 *
 * @module
 */

import { gzipSync } from "node:zlib";

const encoder = new TextEncoder();
const decoder = new TextDecoder("latin1");
const pool: Deno.TcpConn[] = [];

/** Reads until the head and `Content-Length` bytes of body have arrived. */
async function readResponse(
  conn: Deno.TcpConn,
): Promise<{ head: string; body: Uint8Array<ArrayBuffer> }> {
  let buf = new Uint8Array(16 * 1024);
  let got = 0;
  while (true) {
    if (got === buf.length) {
      const bigger = new Uint8Array(buf.length * 2);
      bigger.set(buf);
      buf = bigger;
    }
    const n = await conn.read(buf.subarray(got));
    if (n === null) throw new Error("upstream closed the connection");
    got += n;
    const text = decoder.decode(buf.subarray(0, got));
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) continue;
    const length = Number(/content-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
    if (got >= end + 4 + length) {
      return {
        head: text.slice(0, end),
        body: buf.slice(end + 4, end + 4 + length),
      };
    }
  }
}

if (import.meta.main) {
  const port = Number(Deno.args[0]);
  const upstreamPort = Number(Deno.args[1]);
  const mode = Deno.args[2];
  const gzipped = mode === "gzip";
  const level = gzipped ? Number(Deno.args[3]) : null;
  const compressor = gzipped ? Deno.args[4] : "zlib";
  const tlsMode = mode === "tls" || mode === "tls-file";
  const [certPath, keyPath, filePath] = tlsMode ? Deno.args.slice(3) : [];
  if (
    !(port > 0 && upstreamPort > 0) ||
    (mode !== undefined && !gzipped && !tlsMode) ||
    (level !== null && !(level >= 1 && level <= 9)) ||
    (compressor !== "zlib" && compressor !== "stream") ||
    (tlsMode && !(certPath && keyPath && filePath))
  ) {
    throw new Error(
      "Usage: bench_min_proxy.ts <port> <upstream port> [tls <certificate> <key> <file> | tls-file <certificate> <key> <root> | gzip <level> zlib|stream]: expected two ports, a level from 1 to 9",
    );
  }
  const tls = certPath && keyPath
    ? {
      cert: Deno.readTextFileSync(certPath),
      key: Deno.readTextFileSync(keyPath),
    }
    : {};
  const file = mode === "tls" ? Deno.readFileSync(filePath!) : null;
  const root = mode === "tls-file" ? filePath! : null;
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
  Deno.serve({ hostname: "127.0.0.1", port, ...tls, onListen() {} }, async (
    req,
  ) => {
    if (file !== null && req.method === "GET") {
      return new Response(file, {
        headers: {
          "content-type": "text/html",
          "transfer-encoding": "chunked",
        },
      });
    }
    if (root !== null && req.method === "GET") return fromFile(root, req.url);
    const body = new Uint8Array(await req.arrayBuffer());
    const path = new URL(req.url).pathname.slice("/api".length);
    let head = `${req.method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
    req.headers.forEach((value, name) => {
      if (name !== "host" && name !== "content-length") {
        head += `${name}: ${value}\r\n`;
      }
    });
    head += `content-length: ${body.length}\r\n\r\n`;
    const out = new Uint8Array(head.length + body.length);
    encoder.encodeInto(head, out);
    out.set(body, head.length);
    const conn = pool.pop() ??
      await Deno.connect({ hostname: "127.0.0.1", port: upstreamPort });
    for (let sent = 0; sent < out.length;) {
      sent += await conn.write(out.subarray(sent));
    }
    const response = await readResponse(conn);
    pool.push(conn);
    const lines = response.head.split("\r\n");
    const headers: [string, string][] = [];
    let json = false;
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i]!.indexOf(":");
      const name = lines[i]!.slice(0, colon).toLowerCase();
      // Deno.serve frames the body itself.
      if (
        name === "connection" || name === "keep-alive" ||
        name === "content-length"
      ) continue;
      const value = lines[i]!.slice(colon + 1).trim();
      if (name === "content-type") json = value === "application/json";
      headers.push([name, value]);
    }
    const status = Number(lines[0]!.slice(9, 12));
    if (
      level === null || !json || response.body.length < 20 ||
      !req.headers.get("accept-encoding")?.includes("gzip")
    ) {
      return new Response(response.body, { status, headers });
    }
    headers.push(["content-encoding", "gzip"]);
    if (compressor === "stream") {
      const gz = new Blob([response.body]).stream()
        .pipeThrough(new CompressionStream("gzip"));
      return new Response(gz, { status, headers });
    }
    return new Response(
      gzipSync(
        response.body,
        deflateOptions(level, response.body.length),
      ) as Uint8Array<ArrayBuffer>,
      { status, headers },
    );
  });
}

/** The last modification time seen, and its `Last-Modified` text. */
let lastMtime = NaN;
let lastModified = "";

/**
 * A file's 200 with nginx's work per request: open, `fstat`, read, close
 * (an origin-form target under `root`, no checks).
 */
function fromFile(root: string, url: string): Response {
  const file = Deno.openSync(root + url.slice(url.indexOf("/", 8)));
  let info: Deno.FileInfo;
  let body: Uint8Array<ArrayBuffer>;
  try {
    info = file.statSync();
    body = new Uint8Array(info.size);
    for (let got = 0; got < body.length;) {
      const n = file.readSync(body.subarray(got));
      if (n === null) break;
      got += n;
    }
  } finally {
    file.close();
  }
  const mtime = info.mtime!.getTime();
  if (mtime !== lastMtime) {
    lastMtime = mtime;
    lastModified = new Date(mtime).toUTCString();
  }
  return new Response(body, {
    headers: [
      [
        "etag",
        `"${Math.floor(mtime / 1000).toString(16)}-${info.size.toString(16)}"`,
      ],
      ["last-modified", lastModified],
      ["content-type", "text/html"],
      ["content-length", String(info.size)],
      ["accept-ranges", "bytes"],
      ["transfer-encoding", "chunked"],
    ],
  });
}

/** nginx's window and memory for a short body (`ngx_http_gzip_filter_memory`). */
function deflateOptions(level: number, length: number) {
  let windowBits = 15;
  let memLevel = 8;
  while (length < (1 << (windowBits - 1)) - 262) {
    windowBits--;
    memLevel--;
  }
  return { level, windowBits, memLevel: Math.max(memLevel, 1) };
}
