/**
 * The upstream's WebSocket subprotocol, beside nginx 1.22: both relay the
 * upstream's 101 and its `Sec-WebSocket-Protocol` as they are, whatever
 * list the client wrote and whether it offered the protocol or not.
 */
import { deepStrictEqual } from "node:assert/strict";
import { readHead, writeText } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { pickingUpstream } from "./_picking_upstream.ts";

/** The status line and `Sec-WebSocket-Protocol` values of an upgrade's answer. */
async function answer(port: number, fields: string): Promise<string[]> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await writeText(
      conn,
      "GET /ws/x HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
        `${fields}\r\n`,
    );
    const lines = (await readHead(conn) ?? "closed").split("\r\n");
    return [
      lines[0]!,
      ...lines.filter((l) => /^sec-websocket-protocol:/i.test(l))
        .map((l) => l.slice(l.indexOf(":") + 1).trim()),
    ];
  } finally {
    conn.close();
  }
}

Deno.test("the upstream's subprotocol is relayed as nginx 1.22 relays it, for any list the client wrote", async () => {
  await using up = pickingUpstream();
  await using sides = await bothSides((port) =>
    `${PROCESS}events {}
http {
${TEMP}
  access_log off;
  error_log logs/error.log info;
  server {
    listen 127.0.0.1:${port};
    location /ws/ {
      proxy_pass http://127.0.0.1:${up.port};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_set_header X-Pick $http_x_pick;
    }
  }
}
`
  );
  const cases = [
    "Sec-WebSocket-Protocol: chat,superchat\r\nX-Pick: chat\r\n",
    "Sec-WebSocket-Protocol: chat, superchat\r\nX-Pick: chat\r\n",
    "X-Pick: chat\r\n",
    "Sec-WebSocket-Protocol: chat\r\nX-Pick: other\r\n",
  ];
  for (const fields of cases) {
    deepStrictEqual(
      await answer(sides.gateway.port, fields),
      await answer(sides.nginx.port, fields),
      fields,
    );
  }
  const alerts = (side: { prefix: string }) =>
    logLines(side.prefix, "error.log").filter((l) =>
      / \[(alert|crit|error)\] /.test(l)
    );
  deepStrictEqual(alerts(sides.gateway), alerts(sides.nginx));
});
