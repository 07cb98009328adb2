/**
 * A chunked request body with `proxy_request_buffering off`, beside nginx
 * 1.22: to an HTTP/1.0 upstream (`proxy_http_version` left at 1.0) nginx
 * reads the body whole and sends its length, since HTTP/1.0 has no chunked
 * framing (RFC 9112 §6.1; ngx_http_proxy_handler streams only a body with a
 * length, or to 1.1). The gateway streamed it as `Transfer-Encoding:
 * chunked` to the 1.0 upstream, which reads the chunk lines as the body or
 * refuses the request. To 1.1 both stream it chunked.
 */
import { deepStrictEqual } from "node:assert/strict";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { startRawUpstream, writeText } from "../_utils.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log logs/access.log;
  proxy_request_buffering off;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:${port};
    location /v10/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /v11/ {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_http_version 1.1;
    }
  }
}
`;
}

/** The request's framing as the upstream saw it, and its body decoded. */
interface Seen {
  framing: string;
  body: string;
}

/**
 * An upstream that reads a request whole (by its length, or to the last
 * chunk) and answers 200 with `Connection: close`.
 */
function recordingUpstream(seen: Seen[]) {
  return startRawUpstream(async (conn) => {
    const buf = new Uint8Array(64 * 1024);
    let text = "";
    for (let reads = 0; reads < 10_000; reads++) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) continue;
      const head = text.slice(0, end).toLowerCase();
      const rest = text.slice(end + 4);
      const length = /\r\ncontent-length: *(\d+)/.exec(head)?.[1];
      const chunked = /\r\ntransfer-encoding: *chunked/.test(head);
      if (length !== undefined && rest.length >= Number(length)) {
        seen.push({ framing: `content-length ${length}`, body: rest });
        break;
      }
      if (chunked && rest.endsWith("0\r\n\r\n")) {
        seen.push({ framing: "chunked", body: unchunk(rest) });
        break;
      }
    }
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
}

/** A chunked body decoded. */
function unchunk(text: string): string {
  let body = "";
  for (let at = 0;;) {
    const eol = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return body;
    body += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** A chunked POST of `body` in pieces of 1 to 5 bytes; the status line. */
async function post(port: number, path: string, body: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    let chunks = "";
    let at = 0;
    for (let i = 0; at < body.length; i++) {
      const piece = body.slice(at, at + i % 5 + 1);
      chunks += `${piece.length.toString(16)}\r\n${piece}\r\n`;
      at += piece.length;
    }
    await writeText(
      conn,
      `POST ${path} HTTP/1.1\r\nHost: station\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
    );
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    return n === null
      ? "closed"
      : new TextDecoder().decode(buf.subarray(0, 12));
  } finally {
    conn.close();
  }
}

Deno.test("a chunked body to an HTTP/1.0 upstream goes whole with its length, to HTTP/1.1 chunked, as from nginx 1.22 (proxy_request_buffering off)", async () => {
  const seen: Seen[] = [];
  await using upstream = recordingUpstream(seen);
  await using both = await bothSides((port) => conf(port, upstream.port));
  const body = "0123456789abcdef".repeat(250);
  const got: string[] = [];
  for (const path of ["/v10/x", "/v11/x"]) {
    for (
      const [side, port] of [["nginx", both.nginx.port], [
        "gateway",
        both.gateway.port,
      ]] as const
    ) {
      const before = seen.length;
      const status = await post(port, path, body);
      const one = seen[before];
      got.push(
        `${side} ${path}: ${status} ${one?.framing} ${one?.body === body}`,
      );
    }
  }
  deepStrictEqual(got, [
    "nginx /v10/x: HTTP/1.1 200 content-length 4000 true",
    "gateway /v10/x: HTTP/1.1 200 content-length 4000 true",
    "nginx /v11/x: HTTP/1.1 200 chunked true",
    "gateway /v11/x: HTTP/1.1 200 chunked true",
  ]);
});
