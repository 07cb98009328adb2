/**
 * Bytes 0x80–0xFF in access lines beside nginx 1.22, in each `escape=`
 * mode: `default` writes `\xHH` (ngx_http_log_escape), `json`
 * (ngx_escape_json) and `none` copy the byte as it came, UTF-8 or not. A
 * value holds such bytes from `%HH` in the URI (`$uri`, `$arg_q`) or from
 * a field sent with them (`$http_x_a`); the log files are compared byte
 * for byte.
 */
import { deepStrictEqual } from "node:assert/strict";
import { waitFor } from "../_utils.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { join } from "node:path";

const NEEDS = suiteNeeds("log/escape_bytes_nginx_test.ts", ["nginx"]);

const MODES = ["default", "json", "none"] as const;
const FORMAT = "$uri|$arg_q|$http_x_a|$request|$request_uri";

function conf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
${MODES.map((m) => `  log_format ${m} escape=${m} '${FORMAT}';`).join("\n")}
  server {
    listen 127.0.0.1:${port};
    server_name t;
${MODES.map((m) => `    access_log logs/${m}.log ${m};`).join("\n")}
    return 204;
  }
}
`;
}

const hex = (b: number) => b.toString(16).toUpperCase().padStart(2, "0");

/** [the bytes as `%HH`] each byte 0x80–0xFF alone, and some sequences. */
const VALUES: number[][] = [
  ...Array.from({ length: 128 }, (_, i) => [0x80 + i]),
  [0xc3, 0xa4], // ä: UTF-8
  [0xf0, 0x9f, 0x98, 0x80], // a four-byte character
  [0xed, 0xa0, 0x80], // a surrogate's form: not UTF-8
  [0xe2, 0x82], // a character cut short
  [0xc3, 0xa4, 0xff, 0x41], // UTF-8, then a byte that is not
];

/** One request on its own connection, its bytes as given; read to the close. */
async function send(port: number, bytes: Uint8Array): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(bytes);
    await new Response(conn.readable).arrayBuffer();
  } catch (error) {
    conn.close();
    throw error;
  }
}

function lineCount(file: string): number {
  try {
    return Deno.readFileSync(file).filter((b) => b === 10).length;
  } catch {
    return 0;
  }
}

Deno.test({
  name:
    "access lines hold bytes 0x80-0xFF of a URI and a field as nginx 1.22 writes them, in every escape mode",
  ...NEEDS,
  fn: async () => {
    await using sides = await bothSides((port) => conf(port));
    for (const side of [sides.nginx, sides.gateway]) {
      for (const value of VALUES) {
        const escaped = value.map((b) => `%${hex(b)}`).join("");
        const head = `GET /u${escaped}?q=${escaped} HTTP/1.1\r\nHost: t\r\n` +
          `X-A: ${String.fromCharCode(...value)}\r\nConnection: close\r\n\r\n`;
        await send(side.port, Uint8Array.from(head, (c) => c.charCodeAt(0)));
      }
    }
    const logs = (prefix: string) =>
      MODES.map((m) => join(prefix, "logs", `${m}.log`));
    await waitFor(
      () =>
        [sides.nginx, sides.gateway].every(({ prefix }) =>
          logs(prefix).every((f) => lineCount(f) >= VALUES.length)
        ),
      5000,
    );
    for (const [i, mode] of MODES.entries()) {
      const nginx = await Deno.readFile(logs(sides.nginx.prefix)[i]!);
      const gateway = await Deno.readFile(logs(sides.gateway.prefix)[i]!);
      // Line by line, as text whose chars are the bytes, so a difference
      // names its line.
      const lines = (bytes: Uint8Array) =>
        Array.from(bytes, (b) => String.fromCharCode(b)).join("").split("\n");
      deepStrictEqual(lines(gateway), lines(nginx), mode);
    }
  },
});
