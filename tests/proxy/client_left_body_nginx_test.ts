/**
 * A client that leaves before or while sending its request body, beside
 * nginx 1.22 on the same nginx.conf: a length with none or part of its
 * bytes sent, a chunked body cut inside a chunk, to a proxied location
 * (buffered, and with `proxy_request_buffering off`) and a FastCGI one;
 * `$bytes_sent` too (nothing reached the client).
 * nginx finalizes such a request with 400 (`ngx_http_read_client_request_body`
 * sets `c->error` and returns NGX_HTTP_BAD_REQUEST) and writes its `[info]`
 * line with no `while` phrase when it reads the body before choosing a
 * server, and `while sending request to upstream` with the server when the
 * body is streamed to it.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  type RawUpstream,
  startRawUpstream,
  untilClosed,
  waitFor,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("proxy/client_left_body_nginx_test.ts", ["nginx"]);

function conf(
  port: number,
  up: { http: number; fastcgi: number },
  buffering: "on" | "off",
): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  log_format st '$status $body_bytes_sent $bytes_sent';
  access_log logs/access.log st;
  proxy_request_buffering ${buffering};
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /px/ { proxy_pass http://127.0.0.1:${up.http}; }
    location /fc/ { fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_request_buffering ${buffering};
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_LENGTH $content_length; }
  }
}
`;
}

const LENGTH = "Content-Length: 100\r\n\r\n";
const LARGE = "Content-Length: 100000\r\n\r\n";
const CHUNKED = "Transfer-Encoding: chunked\r\n\r\n";

/**
 * [path, the fields that frame the body, the part of the body sent, the
 * client leaves once the upstream has the request's head]
 */
type Row = [string, string, string, boolean?];

/** Read before any server is chosen: the line names none. */
const BUFFERED: Row[] = [
  ["/px/a", LENGTH, ""],
  ["/px/a", LENGTH, "12345678"],
  ["/px/a", LARGE, "12345678"],
  ["/px/a", CHUNKED, ""],
  ["/px/a", CHUNKED, "10\r\n12345678"],
  ["/px/a", CHUNKED, "8\r\n12345678\r\n"],
  ["/fc/a", LENGTH, ""],
  ["/fc/a", LENGTH, "12345678"],
  ["/fc/a", CHUNKED, "10\r\n12345678"],
];

/**
 * `proxy_request_buffering off` (`fastcgi_request_buffering off`): a body
 * being streamed names the server (nginx's `while sending request to
 * upstream`); a chunked one to HTTP is still read first (nginx speaks
 * HTTP/1.0 upstream, which has no chunked body).
 */
const STREAMED: Row[] = [
  ["/px/a", LARGE, "12345678", true],
  ["/px/a", CHUNKED, "10\r\n12345678"],
  ["/fc/a", LARGE, "12345678", true],
];

for (
  const [buffering, rows] of [["on", BUFFERED], ["off", STREAMED]] as const
) {
  Deno.test(
    `a client that leaves before or while sending its body: nginx 1.22's status and info line, proxy_request_buffering ${buffering}`,
    NEEDS,
    () => compare(buffering, rows),
  );
}

/** Sends each row to both sides and compares their lines. */
async function compare(buffering: "on" | "off", rows: readonly Row[]) {
  await using upstreams = {
    nginx: { http: holding(), fastcgi: holding() },
    gateway: { http: holding(), fastcgi: holding() },
    async [Symbol.asyncDispose]() {
      for (const side of [this.nginx, this.gateway]) {
        await side.http[Symbol.asyncDispose]();
        await side.fastcgi[Symbol.asyncDispose]();
      }
    },
  };
  await using both = await bothSides((port, side) =>
    conf(port, {
      http: upstreams[side].http.port,
      fastcgi: upstreams[side].fastcgi.port,
    }, buffering)
  );
  const seen: Record<string, Record<string, unknown>> = {
    nginx: {},
    gateway: {},
  };
  for (const [path, framing, sent, upstreamFirst] of rows) {
    const row = `POST ${path} ${framing.trim()} ${JSON.stringify(sent)}`;
    for (const side of ["nginx", "gateway"] as const) {
      const { port, prefix } = both[side];
      const up = upstreams[side][path.startsWith("/fc/") ? "fastcgi" : "http"];
      const before = {
        errors: logLines(prefix, "error.log").length,
        access: logLines(prefix, "access.log").length,
        heads: up.heads.length,
      };
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await writeText(
        conn,
        `POST ${path} HTTP/1.1\r\nHost: t\r\n${framing}${sent}`,
      );
      // An event, not a time: the server has been chosen and sent to.
      if (upstreamFirst) await waitFor(() => up.heads.length > before.heads);
      conn.close();
      // The request's error lines are written by its access line.
      await waitFor(
        () => logLines(prefix, "access.log").length > before.access,
        5000,
      );
      seen[side]![row] = {
        access: logLines(prefix, "access.log").slice(before.access),
        errors: logLines(prefix, "error.log").slice(before.errors)
          .filter((l) => l.includes(", client: "))
          .map((l) => maskErrorLine(l).replace(/127\.0\.0\.1:\d+/, "UP")),
      };
    }
  }
  deepStrictEqual(seen.gateway, seen.nginx);
}

/**
 * An upstream (HTTP or FastCGI) that records the first bytes of each
 * connection and reads on until the other side closes it.
 */
function holding(): RawUpstream {
  return startRawUpstream(async (conn, _i, self) => {
    const buf = new Uint8Array(64 * 1024);
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return;
    self.heads.push(new TextDecoder("latin1").decode(buf.subarray(0, n)));
    await untilClosed(conn);
  });
}
