/**
 * Over TLS a request without `Host` is taken as HTTP/2 (src/gateway.ts,
 * describe()), yet an HTTP/1.1 client can send one too: nothing behind the
 * gateway's own `close` answer to such a request is served either. The
 * answer itself is cut, which ends an HTTP/1.x connection; an HTTP/2
 * client loses that one stream and goes on over the same connection
 * (tls_test.ts).
 */
import { deepStrictEqual } from "node:assert/strict";
import { prefixesAhead, prefixWith } from "./_tls.ts";

// The test's prefix, written now: its folders have settled when it runs.
prefixesAhead(1);
import { startMain } from "./_in_process.ts";
import {
  freePort,
  type RawUpstream,
  readHead,
  startRawUpstream,
  writeText,
} from "./_utils.ts";

/** Each way the gateway answers a request without Host itself with `close`. */
const MALFORMED: [string, string][] = [
  ["a bad escape", "GET /api/%zz HTTP/1.1\r\n\r\n"],
  ["a NUL in the path", "GET /api/%00 HTTP/1.1\r\n\r\n"],
  ["a path above the root", "GET /../api/x HTTP/1.1\r\n\r\n"],
  ["an HTTP/1.0 request with a NUL", "GET /api/%00 HTTP/1.0\r\n\r\n"],
  ["a URI past the buffers", `GET /api/${"a".repeat(9000)} HTTP/1.1\r\n\r\n`],
  ["a HEAD with a bad escape", "HEAD /api/%zz HTTP/1.1\r\n\r\n"],
];

/** A valid request, with and without Host, smuggled behind. */
const SMUGGLED = "GET /api/smuggled HTTP/1.1\r\n\r\n" +
  "GET /api/smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n";

/** An upstream that notes each request head and answers `ok`. */
async function answer(conn: Deno.Conn, _: number, up: RawUpstream) {
  for (let i = 0; i < 10; i++) {
    const head = await readHead(conn);
    if (head === null) return;
    up.heads.push(head);
    await writeText(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  }
}

Deno.test("over TLS nothing behind the gateway's own answer to a request without Host is served", async () => {
  await using up = startRawUpstream(answer);
  const tls = freePort();
  await using p = await prefixWith((dir) =>
    `events {}
http {
  error_log ${dir}/logs/error.log;
  server {
    listen 127.0.0.1:${tls} ssl;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
    location /api/ { proxy_pass http://127.0.0.1:${up.port}; }
  }
}
`
  );
  await using _gw = await startMain(["--nginx-conf", p.conf]);
  const seen: [string, string[], boolean][] = [];
  for (const [name, malformed] of MALFORMED) {
    const conn = await Deno.connectTls({
      hostname: "127.0.0.1",
      port: tls,
      caCerts: [p.cert.cert],
    });
    let text = "";
    let closed = false;
    try {
      await writeText(conn, malformed + SMUGGLED);
      const buf = new Uint8Array(64 * 1024);
      // Bounded: each read is a response's bytes, the close ends it; the
      // defect (a served request) shows as a 200, and the upstream's
      // count.
      for (let i = 0; i < 100 && !/ 200 OK/.test(text); i++) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) {
          closed = true;
          break;
        }
        text += new TextDecoder("latin1").decode(buf.subarray(0, n));
      }
    } finally {
      conn.close();
    }
    seen.push([
      name,
      [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => m[1]!),
      closed,
    ]);
  }
  deepStrictEqual(up.heads, []);
  deepStrictEqual(seen, [
    ["a bad escape", ["400"], true],
    ["a NUL in the path", ["400"], true],
    ["a path above the root", ["400"], true],
    ["an HTTP/1.0 request with a NUL", ["400"], true],
    ["a URI past the buffers", ["414"], true],
    // A HEAD answer has no body to cut: the connection is remembered and
    // the next request gets the cut.
    ["a HEAD with a bad escape", ["400", "400"], true],
  ]);
});
