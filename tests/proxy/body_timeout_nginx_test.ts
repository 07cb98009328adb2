/**
 * A client that stalls while sending its request body, beside nginx 1.22
 * on the same nginx.conf with a short `client_body_timeout`: after the
 * head with a length, part-way through a body with a length (under and
 * over the 64 KiB the gateway reads ahead), part-way through a chunked
 * body, to a proxied location (HTTP/1.0 and HTTP/1.1 upstream) and a
 * FastCGI one, with `proxy_request_buffering` (`fastcgi_request_buffering`)
 * on and off. nginx's timer is between two reads of the body, whether it
 * reads the body first or streams it upstream
 * (ngx_http_do_read_client_request_body): past it the request ends with
 * 408 and no error line, and an upstream connection it had opened is
 * closed (ngx_http_upstream_read_request_handler). What the client sees,
 * the access line, the error lines, and that every upstream connection
 * is released are compared.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  startRawUpstream,
  untilClosed,
  waitFor,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { errorResponse } from "../../src/response/mod.ts";

const NEEDS = suiteNeeds("proxy/body_timeout_nginx_test.ts", ["nginx"]);

function conf(
  port: number,
  up: { http: number; fastcgi: number },
  buffering: "on" | "off",
): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  log_format st '$request_uri $status $body_bytes_sent $upstream_status';
  access_log logs/access.log st;
  client_body_timeout 1s;
  proxy_request_buffering ${buffering};
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /px/ { proxy_pass http://127.0.0.1:${up.http}; }
    location /p11/ {
      proxy_pass http://127.0.0.1:${up.http};
      proxy_http_version 1.1;
      client_max_body_size 0;
    }
    location /fc/ { fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_request_buffering ${buffering};
      fastcgi_param REQUEST_URI $request_uri;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_LENGTH $content_length; }
  }
}
`;
}

const SMALL = "Content-Length: 100\r\n\r\n";
const LARGE = "Content-Length: 100000\r\n\r\n";
const CHUNKED = "Transfer-Encoding: chunked\r\n\r\n";

/**
 * [location, the fields that frame the body, the part of it sent, the
 * gateway reads it ahead with request buffering off where nginx streams
 * it]. Read ahead: a body of up to 64 KiB with a length (README,
 * small-unbuffered-body), a chunked one up to `client_max_body_size`
 * (README, chunked uploads are read ahead); nginx's HTTP/1.0 proxy reads
 * a chunked body first too (`/px/`).
 */
type Row = [string, string, string, boolean];

const ROWS: Row[] = [
  ["px", SMALL, "", true],
  ["px", SMALL, "12345678", true],
  ["px", LARGE, "", false],
  ["px", LARGE, "12345678", false],
  ["px", CHUNKED, "10\r\n12345678", false],
  ["p11", CHUNKED, "10\r\n12345678", false],
  ["fc", SMALL, "12345678", true],
  ["fc", LARGE, "12345678", false],
  ["fc", CHUNKED, "10\r\n12345678", true],
];

for (const buffering of ["on", "off"] as const) {
  Deno.test(
    `client_body_timeout ends a stalled body as nginx 1.22 does, its upstream connection closed, proxy_request_buffering ${buffering}`,
    NEEDS,
    () => compare(buffering),
  );
}

/** What one side did with one row. */
interface Seen {
  /** The answer's status, or `closed` when the connection closed without one. */
  answer: string;
  access: string[];
  errors: string[];
  /** Each upstream connection the request opened: closed, or still held. */
  upstream: ("closed" | "held")[];
}

/** Sends every row to both sides, all at once, and compares. */
async function compare(buffering: "on" | "off") {
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
  const seen = { nginx: {}, gateway: {} } as Record<
    "nginx" | "gateway",
    Record<string, Seen>
  >;
  // Each row stalls for client_body_timeout: all at once, on both sides,
  // told apart by their paths.
  await Promise.all((["nginx", "gateway"] as const).map(async (side) => {
    const { port, prefix } = both[side];
    const up = [upstreams[side].http, upstreams[side].fastcgi];
    const answers = await Promise.all(
      ROWS.map(([location, framing, sent], i) =>
        stall(
          port,
          `POST /${location}/${i} HTTP/1.1\r\nHost: t\r\n${framing}${sent}`,
        )
      ),
    );
    // The request's error lines are written by its access line.
    await waitFor(
      () => logLines(prefix, "access.log").length >= ROWS.length,
      5000,
    );
    // An event: each upstream connection closed by the side. One still
    // held past the bound is told as held.
    await waitFor(
      () => up.every((u) => u.conns.every((c) => c.closed)),
      5000,
    ).catch(() => {});
    const access = logLines(prefix, "access.log");
    const errors = logLines(prefix, "error.log")
      .filter((l) => l.includes(", client: "))
      .map((l) => maskErrorLine(l).replace(/127\.0\.0\.1:\d+/g, "UP"));
    ROWS.forEach((row, i) => {
      const path = `/${row[0]}/${i}`;
      seen[side][rowName(row, i)] = {
        answer: answers[i]!,
        access: access.filter((l) => l.startsWith(`${path} `)),
        errors: errors.filter((l) => l.includes(`"POST ${path} HTTP/1.1"`)),
        // The path is in an HTTP request line and a FastCGI REQUEST_URI.
        upstream: up.flatMap((u) => u.conns)
          .filter((c) => c.head.includes(path))
          .map((c) => c.closed ? "closed" : "held"),
      };
    });
  }));
  deepStrictEqual(seen.gateway, expected(seen.nginx, buffering));
}

function rowName([location, framing, sent]: Row, i: number): string {
  return `/${location}/${i} ${framing.trim()} ${JSON.stringify(sent)}`;
}

/**
 * What the gateway must do, from what nginx did, with the README's named
 * differences: **body-timeout-page** (the 408 page is sent and counted;
 * nginx closes, `408 0`), and a body the gateway reads ahead
 * ({@linkcode Row}) opens no upstream connection.
 */
function expected(
  nginx: Record<string, Seen>,
  buffering: "on" | "off",
): Record<string, Seen> {
  const page = errorResponse(408).headers.get("content-length");
  const out: Record<string, Seen> = {};
  ROWS.forEach((row, i) => {
    const name = rowName(row, i);
    const theirs = nginx[name]!;
    out[name] = {
      answer: theirs.answer === "closed" ? "408" : `nginx: ${theirs.answer}`,
      access: theirs.access.map((l) => l.replace(/ 408 0 /, ` 408 ${page} `)),
      errors: theirs.errors,
      upstream: buffering === "off" && row[3] ? [] : theirs.upstream,
    };
  });
  return out;
}

/**
 * Sends a request's head and part of its body, then nothing more, and
 * reads until the answer's head or the close. Bounded for a server that
 * never gives up on the body: the client then leaves.
 */
async function stall(port: number, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bound = setTimeout(() => conn.close(), 8000);
  try {
    await writeText(conn, text);
    const buf = new Uint8Array(16 * 1024);
    let got = "";
    for (let i = 0; i < 64 && !got.includes("\r\n\r\n"); i++) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      got += new TextDecoder().decode(buf.subarray(0, n));
    }
    return got.includes("\r\n\r\n") ? got.slice(9, 12) : "closed";
  } finally {
    clearTimeout(bound);
    try {
      conn.close();
    } catch {
      // closed by the bound
    }
  }
}

/** An upstream connection: its first bytes, and whether it was closed. */
interface UpstreamConn {
  head: string;
  closed: boolean;
}

/**
 * An upstream (HTTP or FastCGI) that records the first bytes of each
 * connection and reads on until the other side closes it.
 */
function holding() {
  const conns: UpstreamConn[] = [];
  const up = startRawUpstream(async (conn) => {
    const buf = new Uint8Array(64 * 1024);
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return;
    const seen = {
      head: new TextDecoder("latin1").decode(buf.subarray(0, n)),
      closed: false,
    };
    conns.push(seen);
    await untilClosed(conn);
    seen.closed = true;
  });
  return Object.assign(up, { conns });
}
