/**
 * Where a buffered request body goes, beside nginx 1.22 on the same
 * nginx.conf (`client_body_buffer_size 8k`), the head and body sent in one
 * write: nginx counts the bytes that came with the head
 * (ngx_http_read_client_request_body's preread) before it sizes its buffer,
 * so a length up to 1.25 × 8k past them, or a chunked body up to 8k past
 * them, stays in memory, without the `[warn] a client request body is
 * buffered to a temporary file` line; larger ones get the file and the line
 * on both sides. The upstream gets the whole body either way.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  type RawUpstream,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("proxy/body_preread_nginx_test.ts", ["nginx"]);

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log logs/access.log;
  client_body_buffer_size 8k;
  client_max_body_size 1m;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /px/ { proxy_pass http://127.0.0.1:${upstream}; }
  }
}
`;
}

/** [framing, body size] */
const ROWS: ["length" | "chunked", number][] = [
  ["length", 8192],
  ["length", 10239],
  ["length", 10240],
  ["length", 10300],
  ["length", 11000],
  ["length", 12000],
  ["length", 20000],
  ["chunked", 8192],
  ["chunked", 8193],
  ["chunked", 9000],
  ["chunked", 10000],
  ["chunked", 20000],
];

Deno.test(
  "a body sent with its head stays in memory as nginx 1.22 keeps it, the temporary file's [warn] only past it",
  NEEDS,
  async () => {
    const got = { nginx: [] as number[], gateway: [] as number[] };
    await using nginxUp = receiving(got.nginx);
    await using gatewayUp = receiving(got.gateway);
    const ups = { nginx: nginxUp, gateway: gatewayUp };
    await using both = await bothSides((port, side) =>
      conf(port, ups[side].port)
    );
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const [framing, size] of ROWS) {
      const body = "b".repeat(size);
      const row = `${framing} ${size}`;
      for (const side of ["nginx", "gateway"] as const) {
        const { port, prefix } = both[side];
        const before = {
          errors: logLines(prefix, "error.log").length,
          access: logLines(prefix, "access.log").length,
        };
        // One string, one write: the body comes with the head.
        const raw = await rawRequest(
          port,
          "POST /px/a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" +
            (framing === "length"
              ? `Content-Length: ${size}\r\n\r\n${body}`
              : "Transfer-Encoding: chunked\r\n\r\n" +
                `${size.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
        );
        await waitFor(
          () => logLines(prefix, "access.log").length > before.access,
          5000,
        );
        seen[side]![row] = {
          status: raw.slice(9, 12),
          upstream: got[side].splice(0),
          errors: logLines(prefix, "error.log").slice(before.errors)
            .filter((l) => l.includes(", client: "))
            .map((l) =>
              maskErrorLine(l).replace(/temporary file \S+,/, "temporary file,")
            ),
        };
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/** An upstream that reads each body by its length and answers 200. */
function receiving(into: number[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const end = head.indexOf("\r\n\r\n") + 4;
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    let read = head.length - end;
    const buf = new Uint8Array(64 * 1024);
    // Bounded by the declared length (the rows' own bodies).
    while (read < length) {
      const n = await conn.read(buf);
      if (n === null) break;
      read += n;
    }
    into.push(read);
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
}
