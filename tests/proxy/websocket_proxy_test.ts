/**
 * The client's side of a tunnel: which requests are upgrades (as Deno's
 * own check decides), the subprotocol relayed as nginx relays it, and the
 * runtime refusing the client's upgrade after the upstream accepted.
 */
import { deepStrictEqual, doesNotMatch, strictEqual } from "node:assert/strict";
import { readHead, startRawUpstream, waitFor, writeText } from "../_utils.ts";
import { implicitUpstream, locationConf, serveLocations } from "./_location.ts";
import { pickingUpstream } from "./_picking_upstream.ts";
import { isWebSocketRequest } from "../../src/proxy/websocket_proxy.ts";
import { listElements, listHas } from "../../src/routing/mod.ts";

const KEY = "dGhlIHNhbXBsZSBub25jZQ==";

Deno.test("listElements() and listHas() read RFC 9110 lists: commas, spaces and tabs only", () => {
  const cases: [string, string[]][] = [
    ["chat,superchat", ["chat", "superchat"]],
    ["chat, superchat", ["chat", "superchat"]],
    ["\tchat ,  superchat\t", ["chat", "superchat"]],
    [",,chat,, ,", ["chat"]],
    ["", []],
    ["chat superchat", ["chat superchat"]],
    ["upgrade\xa0", ["upgrade\xa0"]],
    ["\x0bupgrade", ["\x0bupgrade"]],
  ];
  for (const [value, want] of cases) {
    deepStrictEqual(listElements(value), want, JSON.stringify(value));
    strictEqual(listHas(value, "chat"), want.includes("chat"), value);
  }
  strictEqual(listHas("Keep-Alive, UPGRADE", "upgrade"), true);
});

Deno.test("isWebSocketRequest() calls an upgrade only what Deno.upgradeWebSocket upgrades", () => {
  // Deno skips spaces and tabs around `websocket` and `upgrade`, not the
  // U+00A0 a field's byte 0xA0 reads as, which `trim()` took: such a
  // request was tunnelled, then refused by Deno once the upstream had
  // accepted it (a 500).
  const values = [
    "websocket",
    "WebSocket",
    " websocket\t",
    "h2c, websocket",
    "websocket,h2c",
    "websocket\xa0",
    "\xa0websocket",
    "websocket\xa0, h2c",
    "web socket",
    "websockets",
    "",
  ];
  const connections = [
    "Upgrade",
    "keep-alive, Upgrade",
    "upgrade\xa0",
    "\xa0upgrade",
    "keep-alive,upgrade",
    "upgraded",
  ];
  for (const upgrade of values) {
    for (const connection of connections) {
      const req = () =>
        new Request("http://h/", {
          headers: {
            upgrade,
            connection,
            "sec-websocket-key": KEY,
            "sec-websocket-version": "13",
          },
        });
      if (!isWebSocketRequest(req())) continue;
      const label = JSON.stringify({ upgrade, connection });
      try {
        Deno.upgradeWebSocket(req());
      } catch (error) {
        throw new Error(`${label}: Deno refused it: ${error}`);
      }
    }
  }
});

/** Sends an upgrade request; returns the answer's head. */
async function upgradeHead(port: number, fields: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await writeText(
      conn,
      `GET /ws/x HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Version: 13\r\n${fields}\r\n`,
    );
    return await readHead(conn) ?? "closed";
  } finally {
    conn.close();
  }
}

/** The status line and the `Sec-WebSocket-Protocol` values of a head. */
function statusAndProtocols(head: string): string[] {
  const lines = head.split("\r\n");
  return [
    lines[0]!,
    ...lines.filter((l) => /^sec-websocket-protocol:/i.test(l))
      .map((l) => l.slice(l.indexOf(":") + 1).trim()),
  ];
}

const WS_SET: [string, string][] = [
  ["Upgrade", "$http_upgrade"],
  ["Connection", "upgrade"],
  ["X-Pick", "$http_x_pick"],
];

Deno.test("proxyLocation() relays the upstream's subprotocol as nginx does, whatever list the client wrote", async (t) => {
  await using up = pickingUpstream();
  const group = `127.0.0.1:${up.port}`;
  await using gw = serveLocations([
    locationConf({ name: "/ws/", pass: `http://${group}/`, set: WS_SET }),
  ], [implicitUpstream(group)]);
  // nginx 1.22 answers each of these 101 with the upstream's field (seen
  // beside it: websocket_proxy_nginx_test.ts).
  const cases: [string, string, string[]][] = [
    ["chat,superchat", "chat", ["chat"]],
    ["chat, superchat", "chat", ["chat"]],
    ["chat ,\tsuperchat", "superchat", ["superchat"]],
    ["", "chat", ["chat"]],
    ["chat", "other", ["other"]],
    ["chat,superchat", "", []],
  ];
  for (const [offered, picked, relayed] of cases) {
    await t.step(`offered "${offered}", picked "${picked}"`, async () => {
      const head = await upgradeHead(
        gw.port,
        (offered === "" ? "" : `Sec-WebSocket-Protocol: ${offered}\r\n`) +
          (picked === "" ? "" : `X-Pick: ${picked}\r\n`),
      );
      deepStrictEqual(statusAndProtocols(head), [
        "HTTP/1.1 101 Switching Protocols",
        ...relayed,
      ]);
    });
  }
  strictEqual(gw.errors.join("\n"), "");
});

Deno.test("proxyLocation() answers 502 with the runtime's words, and lets the upstream go, when the runtime refuses the client's upgrade", async (t) => {
  const refusals: [string, () => never, string][] = [
    [
      "a protocol not in Deno's list",
      () => {
        throw new TypeError(
          "Protocol 'chat' not in the request's protocol list (non negotiable)",
        );
      },
      "Protocol 'chat' not in the request's protocol list (non negotiable)",
    ],
    [
      "an Upgrade field Deno reads otherwise",
      () => {
        throw new TypeError(
          "Invalid Header: 'upgrade' header must contain 'websocket'",
        );
      },
      "Invalid Header: 'upgrade' header must contain 'websocket'",
    ],
    [
      "a request already closed",
      () => {
        throw new Deno.errors.Http("Already closed");
      },
      "Already closed",
    ],
    [
      "something not an Error",
      () => {
        throw "refused";
      },
      "refused",
    ],
  ];
  for (const [name, upgrade, words] of refusals) {
    await t.step(name, async () => {
      let upstreamClosed = false;
      await using up = startRawUpstream(async (conn) => {
        const head = await readHead(conn);
        const key = /sec-websocket-key: *(\S+)/i.exec(head ?? "")![1]!;
        const digest = await crypto.subtle.digest(
          "SHA-1",
          new TextEncoder().encode(
            key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11",
          ),
        );
        await writeText(
          conn,
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
            "Connection: Upgrade\r\nSec-WebSocket-Accept: " +
            btoa(String.fromCharCode(...new Uint8Array(digest))) + "\r\n\r\n",
        );
        upstreamClosed = await readHead(conn) === null;
      });
      const group = `127.0.0.1:${up.port}`;
      await using gw = serveLocations(
        [locationConf({ name: "/ws/", pass: `http://${group}/`, set: WS_SET })],
        [implicitUpstream(group)],
        { upgradeWebSocket: upgrade },
      );
      const head = await upgradeHead(gw.port, "");
      strictEqual(head.split("\r\n")[0], "HTTP/1.1 502 Bad Gateway");
      deepStrictEqual(gw.errors, [
        `error: client's WebSocket upgrade refused by the runtime: ${words} http://${group}/x`,
      ]);
      doesNotMatch(gw.errors.join("\n"), /^(alert|crit)/m);
      // The upstream's side is closed and its server no longer held.
      await waitFor(() => upstreamClosed, 60_000);
      deepStrictEqual(
        gw.registry.get(group)!.peers.map((p) => p.rr.conns),
        [0],
      );
    });
  }
});
