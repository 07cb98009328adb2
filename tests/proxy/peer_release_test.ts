/**
 * A server chosen for a request is held (`least_conn`'s count, nginx's
 * `peer->conns`) from its choice until its exchange ends, however it ends:
 * the answer read whole (with the head or streamed), a failure before or
 * after the head, an answer that cannot be relayed, one `error_page`
 * intercepts, the client leaving mid-body, a read timeout, a WebSocket
 * tunnel closed. After each, every count is back to 0.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  rawRequest,
  readHead,
  refusedPort,
  startRawUpstream,
  untilClosed,
  waitFor,
  writeText,
} from "../_utils.ts";
import { compileText } from "../engine/_conf.ts";
import { startFastcgiResponder } from "../_fastcgi_responder.ts";
import { type LocationGateway, serveCompiled } from "./_location.ts";

/** What the upstream does with a request, by the path's first segment. */
async function script(conn: Deno.Conn, gone: Promise<void>): Promise<void> {
  const head = await readHead(conn);
  if (head === null) return;
  const path = head.split(" ")[1]!;
  const kind = path.split("/")[2];
  const answers: Record<string, string> = {
    whole: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    chunked:
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    invalid: "HTTP/1.1 150 Odd\r\n\r\n",
    intercepted: "HTTP/1.1 500 Oops\r\nContent-Length: 100\r\n\r\nx",
  };
  if (kind === "upgrade") {
    await writeText(
      conn,
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: wrong\r\n\r\n",
    );
    return await untilClosed(conn);
  }
  if (kind === "cut") {
    // Half the body, then the connection closes under the gateway.
    return await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf",
    );
  }
  if (kind === "stall" || kind === "abort") {
    await writeText(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nx");
    // Until the gateway gives up (its read timeout) or the client leaves.
    await Promise.race([untilClosed(conn), gone]);
    return;
  }
  await writeText(conn, answers[kind!] ?? answers.whole!);
}

/** A WebSocket upstream that echoes. */
function echoServer() {
  const sockets = new Set<WebSocket>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      sockets.add(socket);
      socket.onmessage = (e) => socket.send(`echo:${e.data}`);
      socket.onclose = () => sockets.delete(socket);
      return response;
    },
  );
  return {
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      for (const s of sockets) s.close();
      await server.shutdown();
    },
  };
}

const CONF = (a: number, b: number, dead: number, ws: number) =>
  `http {
  upstream tunnels { least_conn; server 127.0.0.1:${ws};
    server 127.0.0.1:${dead} max_fails=0; }
  upstream lc { least_conn; server 127.0.0.1:${a} max_fails=0;
    server 127.0.0.1:${b} max_fails=0;
    server 127.0.0.1:${dead} max_fails=0; }
  server { listen 8081;
    location /l/ { proxy_pass http://lc; proxy_read_timeout 1s;
      proxy_intercept_errors on; error_page 500 = /inner; }
    location /live/ { proxy_pass http://tunnels; proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade"; }
    location /ws/ { proxy_pass http://lc; proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade"; }
  }
}`;

function counts(
  gw: LocationGateway,
  group = "lc",
  registry = gw.registry,
): number[] {
  return registry.get(group)!.peers.map((p) => p.rr.conns);
}

const GET = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;

Deno.test("least_conn: every server's count is back to 0 however its exchanges ended", async (t) => {
  const gone = Promise.withResolvers<void>();
  await using a = startRawUpstream((conn) => script(conn, gone.promise));
  await using b = startRawUpstream((conn) => script(conn, gone.promise));
  await using ws = echoServer();
  await using gw = serveCompiled(
    compileText(CONF(a.port, b.port, refusedPort(), ws.port)),
  );
  const settled = () => counts(gw).every((n) => n === 0);
  // A body failing after its head (the upstream closing, a timeout) ends
  // the exchange as exchange_end_test.ts proves in the client: Deno.serve
  // would print its error here.
  for (const kind of ["whole", "chunked", "invalid", "intercepted"]) {
    await t.step(kind, async () => {
      // Three each: the dead server is tried too (a failure before the
      // head), and both live ones answer.
      for (let i = 0; i < 3; i++) await rawRequest(gw.port, GET(`/l/${kind}`));
      await waitFor(settled, 5000);
      deepStrictEqual(counts(gw), [0, 0, 0]);
    });
  }
  await t.step("the client leaves mid-body", async () => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    await writeText(conn, GET("/l/abort"));
    // The head and the first byte arrived: the server is held now.
    const head = await readHead(conn);
    strictEqual(head?.startsWith("HTTP/1.1 200"), true);
    strictEqual(counts(gw).reduce((x, y) => x + y), 1);
    conn.close();
    await waitFor(settled, 5000);
    deepStrictEqual(counts(gw), [0, 0, 0]);
  });
  await t.step("a WebSocket handshake the gateway refuses", async () => {
    const key = "dGhlIHNhbXBsZSBub25jZQ==";
    await rawRequest(
      gw.port,
      `GET /ws/upgrade HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    await waitFor(settled, 5000);
    deepStrictEqual(counts(gw), [0, 0, 0]);
  });
  await t.step(
    "an upgrade in a subrequest: its 101 refused, its connection closed",
    async () => {
      const key = "dGhlIHNhbXBsZSBub25jZQ==";
      const answer = await rawRequest(
        gw.port,
        `GET /ws/upgrade HTTP/1.1\r\nHost: localhost\r\nX-Test-Subrequest: 1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      // A body that fails at once: the page including it ends there.
      strictEqual(answer.startsWith("HTTP/1.1 502"), true);
      strictEqual(
        answer.endsWith("\r\n\r\nfailed: connection upgrade in subrequest"),
        true,
      );
      deepStrictEqual(
        gw.errors.filter((l) => l.includes("upgrade in subrequest")).length,
        1,
      );
      await waitFor(settled, 5000);
      deepStrictEqual(counts(gw), [0, 0, 0]);
    },
  );
  await t.step("a WebSocket tunnel: held while open", async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${gw.port}/live/`);
    const echoed = Promise.withResolvers<string>();
    socket.onmessage = (e) => echoed.resolve(String(e.data));
    await new Promise((resolve) => (socket.onopen = resolve));
    socket.send("hi");
    strictEqual(await echoed.promise, "echo:hi");
    // The refused server was tried first or not at all, and freed: the
    // live one is held by the open tunnel.
    deepStrictEqual(counts(gw, "tunnels"), [1, 0]);
    const closed = new Promise((resolve) => (socket.onclose = resolve));
    socket.close();
    await closed;
    await waitFor(() => counts(gw, "tunnels")[0] === 0, 5000);
    deepStrictEqual(counts(gw, "tunnels"), [0, 0]);
  });
  gone.resolve();
});

Deno.test("least_conn over fastcgi_pass: every server's count is back to 0 however its exchanges ended", async (t) => {
  await using a = startFastcgiResponder();
  await using b = startFastcgiResponder();
  await using gw = serveCompiled(compileText(`http {
  upstream php { least_conn; server 127.0.0.1:${a.port} max_fails=0;
    server 127.0.0.1:${b.port} max_fails=0;
    server 127.0.0.1:${refusedPort()} max_fails=0; }
  server { listen 8081;
    location / { fastcgi_pass php; fastcgi_read_timeout 300ms;
      fastcgi_param SCRIPT_NAME $fastcgi_script_name; }
  }
}`));
  const php = () => counts(gw, "php", gw.fastcgiRegistry);
  const settled = () => php().every((n) => n === 0);
  // Whole answers, a STDERR line, a status, a broken head, one the
  // application never ends, a silent one (once: it waits for the timeout).
  // A body failing after its head ends as the proxy's does (Deno.serve
  // would print its error here).
  for (
    const page of [
      "echo.php",
      "stderr.php",
      "status.php",
      "bad-type.php",
      "no-end.php",
      "silent.php",
    ]
  ) {
    await t.step(page, async () => {
      const times = page === "silent.php" ? 1 : 3;
      for (let i = 0; i < times; i++) {
        await rawRequest(gw.port, GET(`/${page}`));
      }
      await waitFor(settled, 5000);
      deepStrictEqual(php(), [0, 0, 0]);
      strictEqual(gw.errors.some((e) => e.includes("TypeError")), false);
    });
  }
});
