/**
 * `$request_length` beside nginx 1.22 on the same nginx.conf: the request
 * line, every field line and the body bytes read
 * (ngx_http_variable_request_length: `r->request_length`, which
 * ngx_http_process_request_headers grows by each header line and
 * ngx_http_read_client_request_body by each body byte it reads). A body
 * nginx discards unread (a `return`, a static file, a 413 on the declared
 * length) is not counted; a body read to forward it is, to its end or to
 * where its client left. Each side gets the same bytes: field names in any
 * letter case and a name sent on two lines count as sent. What Deno.serve
 * does not tell (the spaces around a field's value, a chunked body's
 * framing) is README's **request-length**: a chunked row's length is not
 * compared. A client that leaves mid-body does so once its first body
 * bytes were asked for (`Expect: 100-continue` answered, then the bytes
 * sent and the connection closed): bytes that come with the close are
 * lost to the gateway with the connection (README request-length).
 *
 * `$content_length` of a chunked body cut short, or given up at
 * `client_max_body_size`, is what came of it, as nginx's
 * `headers_in.content_length_n` grows by each piece parsed
 * (ngx_http_request_body_chunked_filter).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  type RawUpstream,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("log/request_length_nginx_test.ts", ["nginx"]);

function conf(
  port: number,
  upstream: number,
  buffering: "on" | "off",
): string {
  const proxied = `proxy_pass http://127.0.0.1:${upstream};`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format len '$request_method $uri $status $request_length [$content_length]';
  access_log logs/access.log len;
  proxy_request_buffering ${buffering};
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /st/ { }
    location /ret/ { return 200 "abc"; }
    location /px/ { ${proxied} }
    location /small/ { client_max_body_size 10; ${proxied} }
    location /free/ { client_max_body_size 0; ${proxied} }
  }
}
`;
}

const HEAD = "Host: t\r\nConnection: close\r\n";
const CONTINUE = "Host: t\r\nExpect: 100-continue\r\n";

/**
 * [what the client sends, when it leaves: once the upstream has the
 * request's head, or once `100 Continue` came and it sent the rest (else
 * it reads the answer), its body is chunked (its length not compared)]
 */
type Row = [string, ("upstream" | "continued" | null)?, "chunked"?];

/** `proxy_request_buffering on`: a body is read whole before it goes. */
const BUFFERED: Row[] = [
  [`GET /ret/ HTTP/1.1\r\n${HEAD}\r\n`],
  [`GET /st/a.txt?q=1&r=%41 HTTP/1.1\r\n${HEAD}\r\n`],
  [`GET /st/missing HTTP/1.1\r\n${HEAD}\r\n`],
  // Names in any case, one name on two lines, an empty value.
  [
    "GET /ret/ HTTP/1.1\r\nHOST: t\r\nx-a: 1\r\nAccept: */*\r\nX-A: 22\r\n" +
    "x-empty: \r\nUser-Agent: curl/8.0\r\nConnection: close\r\n\r\n",
  ],
  // Refused: at its line (none of it counted, nginx had not parsed it),
  // at its target (the line alone), without Host (the whole head).
  [`GET /ret/${"a".repeat(9000)} HTTP/1.1\r\n${HEAD}\r\n`],
  [`get /ret/ HTTP/1.1\r\n${HEAD}\r\n`],
  [`GET /ret/%00 HTTP/1.1\r\n${HEAD}\r\n`],
  ["GET /ret/ HTTP/1.1\r\nConnection: close\r\n\r\n"],
  // Two requests on one connection: each its own head.
  [
    "GET /ret/a HTTP/1.1\r\nHost: t\r\nX-First: 1\r\n\r\n" +
    `GET /ret/b HTTP/1.1\r\n${HEAD}\r\n`,
  ],
  // A body read and forwarded: counted (in memory, and in a file).
  [`POST /px/a HTTP/1.1\r\n${HEAD}Content-Length: 5\r\n\r\nhello`],
  [
    `POST /px/b HTTP/1.1\r\n${HEAD}Content-Length: 20000\r\n\r\n` +
    "b".repeat(20000),
  ],
  [
    `POST /px/c HTTP/1.1\r\n${HEAD}Transfer-Encoding: chunked\r\n\r\n` +
    "5\r\nhello\r\n0\r\n\r\n",
    null,
    "chunked",
  ],
  // A body discarded unread: not counted.
  [`POST /ret/ HTTP/1.1\r\n${HEAD}Content-Length: 5\r\n\r\nhello`],
  // A chunked body past client_max_body_size: what came before it.
  [
    `POST /small/a HTTP/1.1\r\n${HEAD}Transfer-Encoding: chunked\r\n\r\n` +
    "14\r\n12345678901234567890\r\n0\r\n\r\n",
    null,
    "chunked",
  ],
  [`POST /small/ HTTP/1.1\r\n${HEAD}Content-Length: 11\r\n\r\nhello world`],
  // A client that leaves mid-body: what was read.
  [
    `POST /px/d HTTP/1.1\r\n${CONTINUE}Content-Length: 100\r\n\r\n12345678`,
    "continued",
  ],
  [
    `POST /px/e HTTP/1.1\r\n${CONTINUE}Content-Length: 100000\r\n\r\n` +
    "12345678",
    "continued",
  ],
  // A chunked one: $content_length is what came of it.
  [
    `POST /px/f HTTP/1.1\r\n${CONTINUE}Transfer-Encoding: chunked\r\n\r\n` +
    "10\r\n12345678",
    "continued",
    "chunked",
  ],
  [
    `POST /px/g HTTP/1.1\r\n${CONTINUE}Transfer-Encoding: chunked\r\n\r\n` +
    "8\r\n12345678\r\n",
    "continued",
    "chunked",
  ],
];

/** `proxy_request_buffering off`: a large body is sent as it is read. */
const STREAMED: Row[] = [
  [
    `PUT /px/h HTTP/1.1\r\n${HEAD}Content-Length: 100000\r\n\r\n` +
    "c".repeat(100000),
  ],
  [
    `POST /px/i HTTP/1.1\r\n${CONTINUE}Content-Length: 30000\r\n\r\n` +
    "d".repeat(20000),
    "continued",
  ],
  [
    "POST /px/j HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" +
    "d".repeat(70000),
    "upstream",
  ],
  // A chunked body of no limit: streamed by the gateway, read whole first
  // by nginx (it speaks HTTP/1.0 upstream); once sent, its size is its
  // length.
  [
    `POST /free/a HTTP/1.1\r\n${HEAD}Transfer-Encoding: chunked\r\n\r\n` +
    "5\r\nhello\r\n0\r\n\r\n",
    null,
    "chunked",
  ],
  // A chunked body is read whole first (nginx speaks HTTP/1.0 upstream).
  [
    `POST /px/k HTTP/1.1\r\n${CONTINUE}Transfer-Encoding: chunked\r\n\r\n` +
    "10\r\n12345678",
    "continued",
    "chunked",
  ],
];

/** Each side's static file, written when the file loads. */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/st`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/st/a.txt`, "hello file\n");
}
bothSidesAhead(prepare);

for (
  const [buffering, rows] of [["on", BUFFERED], ["off", STREAMED]] as const
) {
  Deno.test(
    `$request_length is the request line, its field lines and the body bytes read, as nginx 1.22 counts them, proxy_request_buffering ${buffering}`,
    NEEDS,
    () => compare(buffering, rows),
  );
}

/** Sends each row to both sides and compares their lines. */
async function compare(buffering: "on" | "off", rows: readonly Row[]) {
  const upstreams = { nginx: upstream(), gateway: upstream() };
  await using _n = upstreams.nginx;
  await using _g = upstreams.gateway;
  await using both = await bothSides(
    (port, side) => conf(port, upstreams[side].port, buffering),
    { prepare },
  );
  const seen: Record<string, Record<string, string[]>> = {
    nginx: {},
    gateway: {},
  };
  for (const [text, leaves, chunked] of rows) {
    const row = JSON.stringify(
      text.length > 120 ? `${text.slice(0, 110)}… (${text.length})` : text,
    );
    const lines = text.split(/(?=(?:GET|POST|PUT) \/)/).length;
    for (const side of ["nginx", "gateway"] as const) {
      const { port, prefix } = both[side];
      const up = upstreams[side];
      const before = {
        access: logLines(prefix, "access.log").length,
        heads: up.heads.length,
      };
      if (!leaves) await rawRequest(port, text);
      else await leave(port, text, leaves, up);
      await waitFor(
        () => logLines(prefix, "access.log").length >= before.access + lines,
        5000,
      );
      seen[side]![row] = logLines(prefix, "access.log").slice(before.access)
        // README request-length: a chunked body's framing is not counted.
        .map((l) => chunked ? l.replace(/ \d+ \[/, " (length) [") : l);
    }
  }
  deepStrictEqual(seen.gateway, seen.nginx);
}

/**
 * Sends a request whose client leaves mid-body: once its upstream has the
 * head, or once `100 Continue` came and the rest was sent (each an event,
 * never a time; a body the server has asked for is read as it comes).
 */
async function leave(
  port: number,
  text: string,
  when: "upstream" | "continued",
  up: RawUpstream,
): Promise<void> {
  const heads = up.heads.length;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    if (when === "upstream") {
      await writeText(conn, text);
      await waitFor(() => up.heads.length > heads, 5000);
      return;
    }
    const end = text.indexOf("\r\n\r\n") + 4;
    await writeText(conn, text.slice(0, end));
    const buf = new Uint8Array(64);
    let got = "";
    while (!got.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) throw new Error(`closed before 100 Continue: ${got}`);
      got += new TextDecoder().decode(buf.subarray(0, n));
    }
    if (!got.startsWith("HTTP/1.1 100 ")) throw new Error(`not 100: ${got}`);
    await writeText(conn, text.slice(end));
  } finally {
    conn.close();
  }
}

/**
 * An upstream that reads each request whole (by its length, or a chunked
 * one to its last chunk) and answers it.
 */
function upstream(): RawUpstream {
  return startRawUpstream(async (conn, _i, self) => {
    const buf = new Uint8Array(64 * 1024);
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return;
    let text = new TextDecoder("latin1").decode(buf.subarray(0, n));
    self.heads.push(text);
    const end = text.indexOf("\r\n\r\n");
    const head = text.slice(0, end);
    const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    let got = end < 0 ? 0 : n - end - 4;
    while (chunked ? !text.endsWith("0\r\n\r\n") : got < length) {
      const more = await conn.read(buf).catch(() => null);
      if (more === null) return;
      got += more;
      if (chunked) {
        text += new TextDecoder("latin1").decode(buf.subarray(0, more));
      }
    }
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
}
