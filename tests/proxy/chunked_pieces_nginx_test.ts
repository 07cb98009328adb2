/**
 * An upstream's chunked answer whose first read after the head holds no body
 * bytes (a chunk's size line, or part of it, written with the head: a
 * server that writes size, data and CRLF apart, as Python's `http.server`
 * examples do), beside nginx 1.22 on the same nginx.conf. The gateway's
 * body stream gave the client nothing for such a read and was never asked
 * again: the client waited for good with no timer running and nothing
 * logged. Both now send the whole body.
 */
import { deepStrictEqual } from "node:assert/strict";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { readHead, startRawUpstream, writeText } from "../_utils.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_http_version 1.1;
      proxy_read_timeout 30s;
    }
  }
}
`;
}

/** [name, sent with the head, sent once the client has the head] */
const FORMS: [string, string, string][] = [
  ["a size line", "5\r\n", "hello\r\n0\r\n\r\n"],
  ["a size line with an extension", "5;a=b\r\n", "hello\r\n0\r\n\r\n"],
  ["part of a size line", "5", "\r\nhello\r\n0\r\n\r\n"],
  ["the CR of a size line", "5\r", "\nhello\r\n0\r\n\r\n"],
];

const HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" +
  "Transfer-Encoding: chunked\r\n\r\n";

/** Decodes a chunked body (the client's side), or says it is cut. */
function unchunk(text: string): string {
  let body = "";
  for (let at = 0;;) {
    const eol = text.indexOf("\r\n", at);
    if (eol < 0) return `${body} (cut)`;
    const size = parseInt(text.slice(at, eol), 16);
    if (size === 0) return body;
    body += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

Deno.test("a chunked answer whose first read after the head holds no body bytes reaches the client whole, as from nginx 1.22", async () => {
  // The upstream writes the head and the first piece at once, then the
  // rest when told. The gateway sends its head before any body bytes, so
  // its client tells the upstream once it has the head: the gateway has
  // read the head with the first piece alone by then. nginx holds its head
  // until body bytes come, so its upstream writes the rest at once.
  const go: PromiseWithResolvers<void>[] = [];
  await using upstream = startRawUpstream(async (conn, index) => {
    await readHead(conn);
    const [, first, rest] = FORMS[Math.floor(index / 2)]!;
    await writeText(conn, HEAD + first);
    await go[index]!.promise;
    await writeText(conn, rest);
    // Holds the connection: the answer ends by its framing, not a close.
    await conn.read(new Uint8Array(1)).catch(() => null);
  });
  await using both = await bothSides((port) => conf(port, upstream.port));
  const got: string[] = [];
  let index = 0;
  for (const [name] of FORMS) {
    for (const side of [both.nginx, both.gateway]) {
      const release = go[index++] = Promise.withResolvers<void>();
      if (side === both.nginx) release.resolve();
      const conn = await Deno.connect({
        hostname: "127.0.0.1",
        port: side.port,
      });
      // Bounded: before the fix the gateway's answer never ended.
      const guard = setTimeout(() => conn.close(), 10_000);
      try {
        await writeText(conn, "GET /x HTTP/1.1\r\nHost: station\r\n\r\n");
        const head = await readHead(conn);
        release.resolve();
        let text = head?.slice(head.indexOf("\r\n\r\n") + 4) ?? "";
        const buf = new Uint8Array(4096);
        while (!text.endsWith("0\r\n\r\n")) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          text += new TextDecoder().decode(buf.subarray(0, n));
        }
        got.push(`${name}: ${unchunk(text)}`);
      } finally {
        clearTimeout(guard);
        try {
          conn.close();
        } catch { /* closed by the guard */ }
      }
    }
  }
  deepStrictEqual(
    got,
    FORMS.flatMap(([name]) => [`${name}: hello`, `${name}: hello`]),
  );
});
