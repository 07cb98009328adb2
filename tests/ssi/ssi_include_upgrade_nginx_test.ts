/**
 * An SSI include of a WebSocket location, asked for with the client's
 * `Upgrade` fields (a subrequest carries its main request's), beside nginx
 * 1.22: the subrequest goes upstream as a plain request, and the
 * upstream's `101` is refused (ngx_http_upstream_upgrade's `connection
 * upgrade in subrequest`): the upstream's connection is closed, the page
 * ends there, whichever way the include reached the location (directly,
 * its `error_page`, an upstream's `X-Accel-Redirect`). A WebSocket the
 * client asks for directly is still tunnelled (`proxy/` tests).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  startRawUpstream,
  startUpstream,
  untilClosed,
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

const NEEDS = suiteNeeds("ssi/ssi_include_upgrade_nginx_test.ts", ["nginx"]);

function conf(port: number, ups: { ws: number; accel: number }): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    root html;
    ssi on;
    location /ws/ {
      proxy_pass http://127.0.0.1:${ups.ws};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
    }
    location /ep/ { error_page 404 /ws/from-page; }
    location /accel/ { proxy_pass http://127.0.0.1:${ups.accel}; }
  }
}
`;
}

/** Each way an include reaches the WebSocket location. */
const WAYS: [string, string][] = [
  ["directly", "/ws/x"],
  ["through its error_page", "/ep/missing"],
  ["through a proxied X-Accel-Redirect", "/accel/to-ws"],
];

const UPGRADE = [
  "Upgrade: websocket",
  "Connection: Upgrade",
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  "Sec-WebSocket-Version: 13",
].join("\r\n");

/** Each side's pages: one per way in. */
function prepare(prefix: string): void {
  Deno.mkdirSync(join(prefix, "html"), { recursive: true });
  for (const [i, [, uri]] of WAYS.entries()) {
    Deno.writeTextFileSync(
      join(prefix, "html", `way${i}.html`),
      `A<!--# include virtual="${uri}" -->B\n`,
    );
  }
}
bothSidesAhead(prepare);

Deno.test(
  "SSI include of a WebSocket location with the client's Upgrade fields: the upstream's 101 ends the page, its connection closed, as nginx 1.22",
  NEEDS,
  async (t) => {
    let closed = 0;
    // Answers every request with a 101 and holds the connection until the
    // gateway (or nginx) closes it.
    await using ws = startRawUpstream(async (conn, _i, self) => {
      const head = await readHead(conn);
      if (head !== null) self.heads.push(head);
      await writeText(
        conn,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
      );
      await untilClosed(conn);
      closed++;
    });
    await using accel = startUpstream(() =>
      new Response("dropped", {
        headers: { "x-accel-redirect": "/ws/from-accel" },
      })
    );
    await using both = await bothSides(
      (port) => conf(port, { ws: ws.port, accel: accel.port }),
      { prepare },
    );
    for (const [i, [what]] of WAYS.entries()) {
      await t.step(what, async () => {
        const seen = [];
        for (const side of [both.nginx, both.gateway]) {
          const before = logLines(side.prefix, "error.log").length;
          const upgrades = ws.connections;
          const answer = await rawRequest(
            side.port,
            `GET /way${i}.html HTTP/1.1\r\nHost: localhost\r\n${UPGRADE}\r\n\r\n`,
          );
          // Every connection the include opened upstream is closed.
          await waitFor(() => closed === ws.connections);
          const body = answer.slice(answer.indexOf("\r\n\r\n") + 4);
          seen.push({
            // The page ends at the include: nothing after it is sent.
            cut: !body.includes("B"),
            upstreamRequests: ws.connections - upgrades,
            upgradeSent: /\r\nupgrade: websocket\r\n/i.test(ws.heads.at(-1)!),
            lines: logLines(side.prefix, "error.log").slice(before)
              .filter((l) => l.includes("[error]"))
              .map((l) => maskErrorLine(l).replaceAll(side.prefix, "PREFIX")),
          });
        }
        deepStrictEqual(seen[1], seen[0]);
        strictEqual(seen[0]!.cut, true);
        strictEqual(
          seen[0]!.lines.at(-1)!.includes(" connection upgrade in subrequest "),
          true,
        );
      });
    }
  },
);
