/**
 * A WebSocket upgrade whose fields come on several lines, beside nginx 1.22
 * on the same nginx.conf (`proxy_set_header Upgrade $http_upgrade;
 * Connection "upgrade"`): whether it is tunnelled, the
 * `Sec-WebSocket-Accept` the client gets, and the `Upgrade`, `Connection`
 * and first `Sec-WebSocket-Key` the upstream gets. nginx sends the first
 * `Upgrade` line, reads each `Connection` line, relays every key line (the
 * upstream here answers for the first, as a repeated field is read) and
 * tunnels on the upstream's 101. The gateway, its own WebSocket client
 * upstream, sends one key: the first line's.
 */
import { deepStrictEqual } from "node:assert/strict";
import { readHead, startRawUpstream, writeText } from "../_utils.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("proxy/websocket_lines_nginx_test.ts", ["nginx"]);

const K1 = "dGhlIHNhbXBsZSBub25jZQ==";
const K2 = "AQIDBAUGBwgJCgsMDQ4PEA==";
const ASKS = ["Upgrade: websocket", "Connection: Upgrade"];

/** The upgrade's lines after `Host`. */
const ROWS: string[][] = [
  [...ASKS, `Sec-WebSocket-Key: ${K1}`],
  [...ASKS, `Sec-WebSocket-Key: ${K1}`, `Sec-WebSocket-Key: ${K2}`],
  [...ASKS, `Sec-WebSocket-Key: ${K2}`, `Sec-WebSocket-Key: ${K1}`],
  [...ASKS, "Sec-WebSocket-Key:", `Sec-WebSocket-Key: ${K1}`],
  [...ASKS, `Sec-WebSocket-Key: ${K1}, ${K2}`],
  [
    "Upgrade: websocket",
    "Upgrade: foo",
    "Connection: Upgrade",
    `Sec-WebSocket-Key: ${K1}`,
  ],
  [
    "Upgrade: foo",
    "Upgrade: websocket",
    "Connection: Upgrade",
    `Sec-WebSocket-Key: ${K1}`,
  ],
  [
    "Upgrade: websocket",
    "Connection: keep-alive",
    "Connection: Upgrade",
    `Sec-WebSocket-Key: ${K1}`,
  ],
  [
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Connection: close",
    `Sec-WebSocket-Key: ${K1}`,
  ],
  [
    ...ASKS,
    `Sec-WebSocket-Key: ${K1}`,
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Version: 8",
  ],
];

async function acceptOf(key: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-1",
    new TextEncoder().encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
  );
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/**
 * A WebSocket upstream: records the handshake's `Upgrade` and `Connection`
 * lines and its first key line, answers 101 for that key, then waits until
 * the proxy closes.
 */
function upstream(seen: string[][]): ReturnType<typeof startRawUpstream> {
  return startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const lines = head.split("\r\n");
    const key = lines.find((l) => /^sec-websocket-key:/i.test(l));
    seen.push([
      ...lines.filter((l) => /^(upgrade|connection):/i.test(l)),
      key ?? "(no key)",
    ].map(lowerName));
    const value = key?.slice(key.indexOf(":") + 1).trim() ?? "";
    await writeText(
      conn,
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
        `Connection: Upgrade\r\nSec-WebSocket-Accept: ${await acceptOf(
          value,
        )}\r\n\r\n`,
    );
    await readHead(conn); // until the proxy closes
  });
}

/** A field line with its name in lower case, one space after the colon. */
function lowerName(line: string): string {
  const colon = line.indexOf(":");
  if (colon < 0) return line;
  return `${line.slice(0, colon).toLowerCase()}: ${
    line.slice(colon + 1).trim()
  }`;
}

/** The status line and the accept the client got. */
async function answer(port: number, lines: string[]): Promise<string[]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await writeText(
      conn,
      `GET /ws/x HTTP/1.1\r\nHost: a\r\n${
        lines.map((l) => `${l}\r\n`).join("")
      }\r\n`,
    );
    const got = (await readHead(conn) ?? "closed").split("\r\n");
    return [
      got[0]!.split(" ").slice(0, 2).join(" "),
      ...got.filter((l) => /^sec-websocket-accept:/i.test(l))
        .map(lowerName),
    ];
  } finally {
    conn.close();
  }
}

Deno.test(
  "an upgrade's fields on several lines are read as nginx 1.22 reads them",
  NEEDS,
  async () => {
    const seen = { nginx: [] as string[][], gateway: [] as string[][] };
    await using upN = upstream(seen.nginx);
    await using upG = upstream(seen.gateway);
    await using sides = await bothSides((port, side) =>
      `${PROCESS}events {}
http {
${TEMP}
  access_log off;
  error_log logs/error.log info;
  server {
    listen 127.0.0.1:${port};
    location /ws/ {
      proxy_pass http://127.0.0.1:${side === "nginx" ? upN.port : upG.port};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
    }
  }
}
`
    );
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (const row of ROWS) {
      want.push([
        row,
        await answer(sides.nginx.port, row),
        seen.nginx.splice(0),
      ]);
      got.push([
        row,
        await answer(sides.gateway.port, row),
        seen.gateway.splice(0),
      ]);
    }
    deepStrictEqual(got, want);
  },
);
