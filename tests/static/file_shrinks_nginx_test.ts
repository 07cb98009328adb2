/**
 * A static file that shrinks while it is sent, beside nginx 1.22 on the
 * same nginx.conf: nginx's `[alert] pread() read only N of M from "…"
 * while sending response to client` with the request's fields, for a whole
 * file's 200 and a range's 206, and the connection cut short. How many
 * bytes each side had read when the file shrank depends on its buffers and
 * the moment, so N and M are masked; the rest is compared word for word.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { maskErrorLine, waitFor } from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  type Side,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("static/file_shrinks_nginx_test.ts", ["nginx"]);

/**
 * Far more than both sides' socket buffers hold while the client reads
 * nothing after its first bytes, and than the gateway's cache takes: the
 * server is still reading the file when it shrinks.
 */
const SIZE = 16 * 1024 * 1024;

function conf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location / { }
  }
}
`;
}

const NAMES = ["whole.bin", "range.bin"];

function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html`, { recursive: true });
  // Sparse: the size costs no disk and no writing.
  for (const name of NAMES) {
    Deno.writeFileSync(`${prefix}/html/${name}`, new Uint8Array(0));
    Deno.truncateSync(`${prefix}/html/${name}`, SIZE);
  }
}
bothSidesAhead(prepare);

/**
 * Asks for `name`, waits until the first body bytes arrived, shrinks the
 * file, then reads on until the server closes. Returns the bytes read.
 */
async function shrinkWhileSent(
  side: Side,
  name: string,
  fields: string,
): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: side.port });
  try {
    await conn.write(new TextEncoder().encode(
      `GET /${name} HTTP/1.1\r\nHost: t\r\n${fields}\r\n`,
    ));
    const buf = new Uint8Array(64 * 1024);
    let total = 0;
    let head = "";
    // The event: the head and some body bytes have reached the client.
    for (let i = 0; i < 1000; i++) {
      const n = await conn.read(buf);
      if (n === null) throw new Error("closed before the body");
      total += n;
      head += new TextDecoder().decode(buf.subarray(0, n));
      const end = head.indexOf("\r\n\r\n");
      if (end !== -1 && head.length > end + 4) break;
    }
    await Deno.truncate(`${side.prefix}/html/${name}`, 1000);
    // Bounded by the file's size: the server cuts the body short.
    for (let i = 0; i < SIZE / 1024 + 10; i++) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      total += n;
    }
    return total;
  } finally {
    conn.close();
  }
}

/** A side's error lines, the prefix and the counts masked. */
function alerts(side: Side): string[] {
  return logLines(side.prefix, "error.log")
    .filter((l) => l.includes("[alert]"))
    .map((l) =>
      maskErrorLine(l)
        .replaceAll(side.prefix, "PREFIX")
        .replace(/read only \d+ of \d+/, "read only N of M")
    );
}

Deno.test(
  "a static file that shrinks while sent: nginx's pread() alert with the request's fields, for 200 and 206",
  NEEDS,
  async () => {
    await using sides = await bothSides(conf, { prepare });
    const rows: [string, string][] = [
      ["whole.bin", ""],
      ["range.bin", "Range: bytes=1-\r\n"],
    ];
    const seen: Record<string, string[]> = {};
    for (const side of [sides.nginx, sides.gateway]) {
      const name = side === sides.nginx ? "nginx" : "gateway";
      for (const [file, fields] of rows) {
        const read = await shrinkWhileSent(side, file, fields);
        strictEqual(read < SIZE, true, `${name} ${file}: cut short`);
      }
      await waitFor(() => alerts(side).length >= rows.length);
      seen[name] = alerts(side);
    }
    const line = (file: string) =>
      `TIME [alert] PID#TID: *N pread() read only N of M from "PREFIX/html/${file}" while sending response to client, client: 127.0.0.1, server: t, request: "GET /${file} HTTP/1.1", host: "t"`;
    deepStrictEqual(seen.nginx, [line("whole.bin"), line("range.bin")]);
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);
