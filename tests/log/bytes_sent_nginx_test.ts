/**
 * `$bytes_sent` and `$sent_http_content_length` / `$sent_http_transfer_encoding`
 * beside nginx 1.22 on the same nginx.conf: on each side `$bytes_sent` is
 * every byte its client read (status line, fields, blank line, body and its
 * chunked framing) and `$body_bytes_sent` what followed the head, for static
 * files, `return`, pages, proxied answers with a length and chunked, HEAD
 * and kept-alive requests; `$sent_http_content_length` and
 * `$sent_http_transfer_encoding` are the framing field its client read.
 * The heads differ by design (`Server`, `Last-Modified`, …): each side is
 * held to its own client's bytes, and both to the same framing. HTTP/1.0
 * is served as 1.1 (README http10-no-host): not compared. A 205 Reset
 * Content goes without a body from the gateway (`Deno.serve` sends none,
 * RFC 9110 §15.3.6) where nginx sends the one it has: each side's line is
 * held to what its client read, not to the other's.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  type RawUpstream,
  readRequest,
  startRawUpstream,
  startUpstream,
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

const NEEDS = suiteNeeds("log/bytes_sent_nginx_test.ts", ["nginx"]);

function conf(port: number, upstream: number, raw: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format sent '$status $body_bytes_sent $bytes_sent [$sent_http_content_length] [$sent_http_transfer_encoding]';
  access_log logs/access.log sent;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /st/ { }
    location /ret/ { return 200 "abc"; }
    location /none/ { return 204; }
    location /reset/ { return 205 "abc"; }
    location /moved/ { return 302 /st/a.txt; }
    location /up/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /raw/ { proxy_pass http://127.0.0.1:${raw}; }
  }
}
`;
}

/** [the request line, the fields after Host] */
const ROWS: [string, string][] = [
  ["GET /st/a.txt HTTP/1.1", "Connection: close\r\n"],
  ["GET /st/a.txt HTTP/1.1", ""],
  ["HEAD /st/a.txt HTTP/1.1", "Connection: close\r\n"],
  ["GET /st/missing HTTP/1.1", "Connection: close\r\n"],
  ["GET /ret/ HTTP/1.1", "Connection: close\r\n"],
  ["GET /none/ HTTP/1.1", "Connection: close\r\n"],
  ["GET /moved/ HTTP/1.1", "Connection: close\r\n"],
  ["GET /up/length HTTP/1.1", "Connection: close\r\n"],
  ["GET /up/length HTTP/1.1", ""],
  ["GET /up/chunked HTTP/1.1", "Connection: close\r\n"],
  ["GET /up/chunked HTTP/1.1", ""],
  ["HEAD /up/length HTTP/1.1", "Connection: close\r\n"],
];

/**
 * A 205 Reset Content: made by `return`, and relayed with a body and
 * without. Each asks to close: the gateway's 205 has no length field, so a
 * kept-alive one ends only with the connection (RFC 9112 §6.3).
 */
const RESET_ROWS: [string, string][] = [
  ["GET /reset/ HTTP/1.1", "Connection: close\r\n"],
  ["HEAD /reset/ HTTP/1.1", "Connection: close\r\n"],
  ["GET /raw/reset HTTP/1.1", "Connection: close\r\n"],
  ["GET /raw/reset-empty HTTP/1.1", "Connection: close\r\n"],
];

const encoder = new TextEncoder();

/**
 * Each side's static file, written when the file loads: a root written just
 * before its first request waits for the gateway's settle proof.
 */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/st`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/st/a.txt`, "hello file\n");
}
bothSidesAhead(prepare);

Deno.test(
  "$bytes_sent is every byte the client read and $sent_http_content_length the length sent, as nginx 1.22 counts them",
  NEEDS,
  async () => {
    const seen = await measure(ROWS);
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

Deno.test(
  "a 205 Reset Content's $body_bytes_sent and $bytes_sent are what its client read, on each side",
  NEEDS,
  async () => {
    const seen = await measure(RESET_ROWS);
    // The bodies differ by design (nginx sends one): each side is held to
    // its own client's bytes, and both to the status.
    const held = (side: Record<string, Record<string, unknown>>) =>
      Object.fromEntries(
        Object.entries(side).map((
          [row, { "a length": _, chunked: _c, ...rest }],
        ) => [row, rest]),
      );
    deepStrictEqual(held(seen.gateway!), held(seen.nginx!));
  },
);

/** Sends each row to both sides: what each logged against what its client read. */
async function measure(
  rows: readonly [string, string][],
): Promise<Record<string, Record<string, Record<string, unknown>>>> {
  const upstreams = {
    nginx: { http: upstream(), raw: resetUpstream() },
    gateway: { http: upstream(), raw: resetUpstream() },
  };
  await using _n = upstreams.nginx.http;
  await using _nr = upstreams.nginx.raw;
  await using _g = upstreams.gateway.http;
  await using _gr = upstreams.gateway.raw;
  await using both = await bothSides(
    (port, side) =>
      conf(port, upstreams[side].http.port, upstreams[side].raw.port),
    { prepare },
  );
  const seen: Record<string, Record<string, Record<string, unknown>>> = {
    nginx: {},
    gateway: {},
  };
  for (const [line, fields] of rows) {
    const row = `${line} ${fields.trim()}`;
    for (const side of ["nginx", "gateway"] as const) {
      const { port, prefix } = both[side];
      const before = logLines(prefix, "access.log").length;
      const raw = encoder.encode(
        await rawRequest(port, `${line}\r\nHost: t\r\n${fields}\r\n`),
      );
      await waitFor(
        () => logLines(prefix, "access.log").length > before,
        5000,
      );
      const [status, body, total, length, encoding] = logLines(
        prefix,
        "access.log",
      )[before]!.split(" ");
      const text = new TextDecoder().decode(raw);
      const head = text.indexOf("\r\n\r\n") + 4;
      // The framing field the client read, as `[value]` or `[-]`.
      const field = (name: string) =>
        `[${
          new RegExp(`\r\n${name}: *([^\r]*)`, "i").exec(
            text.slice(0, head),
          )?.[1] ?? "-"
        }]`;
      seen[side]![row] = {
        status,
        // Each side's counts against what its own client read.
        "$bytes_sent is what was read": Number(total) === raw.length ||
          `${total} logged, ${raw.length} read`,
        "$body_bytes_sent follows the head": Number(body) ===
            raw.length - head || `${body} logged, ${raw.length - head} read`,
        "$sent_http_content_length is the length read":
          length === field("content-length") ||
          `${length} logged, ${field("content-length")} read`,
        "$sent_http_transfer_encoding is the coding read":
          encoding === field("transfer-encoding") ||
          `${encoding} logged, ${field("transfer-encoding")} read`,
        // The pages differ by design (README error-page): whether a
        // length was sent is compared, not the length.
        "a length": length !== "[-]",
        "chunked": encoding !== "[-]",
      };
    }
  }
  return seen;
}

/** An upstream answering `/up/length` with a length and `/up/chunked` without. */
function upstream() {
  return startUpstream((req) =>
    req.target === "/up/chunked"
      ? new Response(new Blob(["chunked answer\n"]).stream())
      : new Response("length answer\n")
  );
}

/**
 * An upstream answering a 205 Reset Content, with a body (`/raw/reset`)
 * and without (`/raw/reset-empty`): raw, as `Deno.serve` sends no body
 * with a 205.
 */
function resetUpstream(): RawUpstream {
  return startRawUpstream(async (conn) => {
    const request = await readRequest(conn);
    if (request === null) return;
    const body = request.head.startsWith("GET /raw/reset ") ? "abc" : "";
    await writeText(
      conn,
      `HTTP/1.1 205 Reset Content\r\nContent-Length: ${body.length}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  });
}
