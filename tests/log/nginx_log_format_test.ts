/**
 * log_format beside nginx 1.22: the same requests to nginx, and their facts
 * written by formatLogLine() with the same formats, compared byte for byte
 * (values that depend on time and byte counts are left out of the formats).
 */

import { strictEqual } from "node:assert/strict";
import { parseBasicCredentials } from "../../src/access/mod.ts";
import {
  compileLogFormat,
  formatLogLine,
  type LogFormat,
  logLineBytes,
} from "../../src/log/mod.ts";
import { startNginx } from "../_nginx.ts";

const FORMAT = "$remote_addr|$remote_user|$request|$status|$pipe|" +
  "$connection_requests|$http_x_a|$http_referer|$sent_http_content_type|" +
  "$sent_http_x_none|$upstream_addr|$upstream_status";
const MODES = ["default", "json", "none"] as const;

// Header lines sent besides Host and Connection (raw bytes as Latin-1 chars).
const REQUESTS: [string, string[]][] = [
  ["/t/plain", []],
  ["/t/quote", ['X-A: say "hi" \\ back', "Referer: http://x/"]],
  ["/t/empty", ["X-A:", "Referer: "]],
  ["/t/ctl", ["X-A: tab\there\u0001\u007f"]],
  ["/t/utf8", ["X-A: \u00c3\u00a4\u00e4\u00b8\u00ad"]],
  ["/t/user", [`Authorization: Basic ${btoa("st\u00e4ff:pw")}`]],
  ['/t/q%22?a=%ZZ"', []],
];

/** Sends bytes as they are (rawRequest sends text as UTF-8) and reads the reply. */
async function sendBytes(port: number, bytes: Uint8Array): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(bytes);
    return await new Response(conn.readable).text();
  } catch (error) {
    conn.close();
    throw error;
  }
}

function headersOf(lines: string[]): Headers {
  const headers = new Headers();
  for (const l of lines) {
    const colon = l.indexOf(":");
    headers.append(l.slice(0, colon), l.slice(colon + 1).trim());
  }
  return headers;
}

Deno.test("log_format with escape=default|json|none writes what nginx 1.22 writes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "log-format-" });
  try {
    await using nginx = await startNginx({
      servers: ["127.0.0.1:9"],
      httpLines: MODES.map((m) => `log_format ${m} escape=${m} '${FORMAT}';`),
      serverLines: [
        `location /t/ { ${
          MODES.map((m) => `access_log ${dir}/${m}.log ${m};`).join(" ")
        } default_type text/plain; return 200 "ok"; }`,
      ],
    });
    const formats = new Map<string, LogFormat>();
    for (const m of MODES) {
      const r = compileLogFormat(m, [`escape=${m}`, FORMAT]);
      if (!r.ok) throw new Error(r.error);
      formats.set(m, r.format);
    }
    for (const [target, lines] of REQUESTS) {
      const head = `GET ${target} HTTP/1.1\r\nHost: station\r\n${
        lines.map((l) => `${l}\r\n`).join("")
      }Connection: close\r\n\r\n`;
      const bytes = Uint8Array.from(head, (c) => c.charCodeAt(0));
      const response = await sendBytes(nginx.port, bytes);
      const status = Number(response.slice(9, 12));
      const type = response.match(/\r\nContent-Type: ([^\r]*)/)?.[1] ?? null;
      const headers = headersOf(lines);
      const record = {
        time: new Date(),
        startMs: Date.now(),
        remoteAddr: "127.0.0.1",
        remoteUser: parseBasicCredentials(headers.get("authorization"))?.user,
        request: `GET ${target} HTTP/1.1`,
        requestLength: bytes.length,
        headers,
        connection: 1,
        connectionRequests: 1,
        pipelined: false,
        status,
        bodyBytesSent: 2,
        bytesSent: 0,
        responseHeaders: new Headers(
          type === null ? {} : { "content-type": type },
        ),
      };
      for (const m of MODES) {
        const logged = await Deno.readFile(`${dir}/${m}.log`);
        const last = new TextDecoder().decode(logged).trimEnd().split("\n")
          .at(-1);
        strictEqual(
          new TextDecoder().decode(
            logLineBytes(formatLogLine(formats.get(m)!, record)),
          ),
          last,
          `${m} ${target}`,
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
