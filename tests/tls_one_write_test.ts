/**
 * Over TLS a response leaves in one TLS record: Deno leaves Nagle's
 * algorithm on for TLS connections, so a head written alone holds its body
 * until the client's delayed acknowledgement, about 40 ms a response
 * (`src/response/tls_one_write.ts`). The client talks to the gateway
 * through a relay on loopback that counts the records the gateway sends:
 * each write of the gateway is at least one record, whatever the timing of
 * the TCP segments, so the count says whether the head went alone.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  completeResponses,
  freePort,
  readHead,
  startRawUpstream,
  writeText,
} from "./_utils.ts";
import { prefixesAhead, prefixWith } from "./_tls.ts";

// The test's prefix, written now: its folders have settled when it runs.
prefixesAhead(1);
import { startMain } from "./_in_process.ts";

/** TLS record type of application data (RFC 8446 §5.1). */
const APPLICATION_DATA = 23;

/** A relay to `port` that counts the application-data records sent back. */
interface RecordRelay extends AsyncDisposable {
  port: number;
  /** Records from the server so far. */
  records(): number;
}

/** Starts a relay for one connection to 127.0.0.1:`port`. */
function recordRelay(port: number): RecordRelay {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let records = 0;
  const open: Deno.Conn[] = [];
  const relaying = (async () => {
    const client = await listener.accept();
    open.push(client);
    const server = await Deno.connect({ hostname: "127.0.0.1", port });
    open.push(server);
    const up = client.readable.pipeTo(server.writable).catch(() => {});
    // The 5-byte record header (type, version, length) is read across
    // reads; `skip` is what is left of the current record's body.
    const header: number[] = [];
    let skip = 0;
    const count = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        for (let i = 0; i < chunk.length;) {
          if (skip > 0) {
            const n = Math.min(skip, chunk.length - i);
            skip -= n;
            i += n;
            continue;
          }
          header.push(chunk[i++]!);
          if (header.length === 5) {
            if (header[0] === APPLICATION_DATA) records++;
            skip = (header[3]! << 8) | header[4]!;
            header.length = 0;
          }
        }
        out.enqueue(chunk);
      },
    });
    const down = server.readable.pipeThrough(count).pipeTo(client.writable)
      .catch(() => {});
    await Promise.all([up, down]);
  })();
  return {
    port: listener.addr.port,
    records: () => records,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed by its pipe */ }
      }
      await relaying.catch(() => {});
    },
  };
}

/** Reads one response off a kept-alive connection; the rest stays in `state`. */
async function readOne(
  conn: Deno.Conn,
  state: { bytes: Uint8Array },
): Promise<string> {
  const buf = new Uint8Array(64 * 1024);
  for (let reads = 0; reads < 1000; reads++) {
    const read = completeResponses(state.bytes, [false]);
    if (read.count >= 1) {
      const head = new TextDecoder().decode(state.bytes.subarray(0, read.end));
      state.bytes = state.bytes.slice(read.end);
      return head;
    }
    const n = await conn.read(buf);
    if (n === null) throw new Error("closed before a complete response");
    const more = new Uint8Array(state.bytes.length + n);
    more.set(state.bytes);
    more.set(buf.subarray(0, n), state.bytes.length);
    state.bytes = more;
  }
  throw new Error("no complete response in 1000 reads");
}

const PAGE = "<p>" + "station ".repeat(255) + "</p>\n"; // 2,048 bytes
const JSON_2K = JSON.stringify({ items: "x".repeat(2036) }); // 2,048 bytes

Deno.test("over TLS each response leaves in one TLS record: static (with and without an access line, whole, a range, 304, empty, 416), proxied, return, error page, large and small", async () => {
  // The upstream writes head and body at once: the gateway holds the body
  // when it answers, as with a small answer of a local application.
  await using up = startRawUpstream(async (conn) => {
    for (let i = 0; i < 100; i++) {
      const head = await readHead(conn);
      if (head === null) return;
      const body = head.startsWith("GET /small ") ? '{"ok":true}' : JSON_2K;
      await writeText(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
          `Content-Length: ${body.length}\r\n\r\n${body}`,
      );
    }
  });
  const tls = freePort();
  await using p = await prefixWith((dir) =>
    `events {}
http {
  error_log ${dir}/logs/error.log;
  access_log ${dir}/logs/access.log;
  server {
    listen 127.0.0.1:${tls} ssl;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
    root html;
    error_page 404 /404.html;
    location /api/ { proxy_pass http://127.0.0.1:${up.port}/; }
    location = /ret { return 200 "${"r".repeat(1000)}"; }
    location = /nothing { return 204; }
    # No access line to wait for: the file's answer goes out as made.
    location /quiet/ { access_log off; }
  }
}
`
  );
  await Deno.writeTextFile(join(p.dir, "html", "2k.html"), PAGE);
  await Deno.writeTextFile(join(p.dir, "html", "404.html"), PAGE);
  await Deno.mkdir(join(p.dir, "html", "quiet"));
  await Deno.writeTextFile(join(p.dir, "html", "quiet", "2k.html"), PAGE);
  await Deno.writeTextFile(join(p.dir, "html", "quiet", "empty.html"), "");
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  await using relay = recordRelay(tls);
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: relay.port,
    caCerts: [p.cert.cert],
  });
  const seen: [string, string, string, number][] = [];
  try {
    const state = { bytes: new Uint8Array(0) };
    // The first response shares its records with the handshake's tail
    // (session tickets); it is not counted.
    const paths = [
      "/",
      "/2k.html",
      "/api/x",
      "/api/small",
      "/ret",
      "/missing",
      "/",
      "/nothing",
      "/quiet/2k.html",
      "/quiet/2k.html\r\nRange: bytes=10-1500",
      "/quiet/2k.html\r\nIf-None-Match: *",
      "/quiet/empty.html",
      "/quiet/2k.html\r\nRange: bytes=5000-",
    ];
    for (const [i, path] of paths.entries()) {
      const before = relay.records();
      // A path may carry a field after it, on its own line.
      const [target, ...fields] = path.split("\r\n");
      await writeText(
        conn,
        `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${
          fields.map((f) => `${f}\r\n`).join("")
        }\r\n`,
      );
      const response = await readOne(conn, state);
      if (i === 0) continue;
      const framing = /\r\ntransfer-encoding: chunked\r\n/i.test(response)
        ? "chunked"
        : /\r\ncontent-length: \d+\r\n/i.test(response)
        ? "length"
        : "neither";
      seen.push([
        path,
        response.slice(9, 12),
        framing,
        relay.records() - before,
      ]);
    }
  } finally {
    conn.close();
  }
  deepStrictEqual(seen, [
    ["/2k.html", "200", "chunked", 1],
    ["/api/x", "200", "chunked", 1],
    ["/api/small", "200", "chunked", 1],
    ["/ret", "200", "chunked", 1],
    ["/missing", "404", "chunked", 1],
    ["/", "200", "chunked", 1],
    ["/nothing", "204", "neither", 1],
    ["/quiet/2k.html", "200", "chunked", 1],
    ["/quiet/2k.html\r\nRange: bytes=10-1500", "206", "chunked", 1],
    ["/quiet/2k.html\r\nIf-None-Match: *", "304", "neither", 1],
    ["/quiet/empty.html", "200", "length", 1],
    ["/quiet/2k.html\r\nRange: bytes=5000-", "416", "chunked", 1],
  ]);
});
