/** WebSocket and server-sent events through /api/. */
import {
  deepStrictEqual,
  doesNotMatch,
  match,
  strictEqual,
} from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  refusedPort,
  startGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "./_utils.ts";

/** A WebSocket upstream: echoes, reports its subprotocol, closes on "bye". */
function startWsUpstream() {
  const seen: {
    protocol: string | null;
    cookie: string | null;
    host: string | null;
  }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      if (req.headers.get("upgrade") !== "websocket") {
        return new Response("websocket please", { status: 426 });
      }
      seen.push({
        protocol: req.headers.get("sec-websocket-protocol"),
        cookie: req.headers.get("cookie"),
        host: req.headers.get("host"),
      });
      const { socket, response } = Deno.upgradeWebSocket(req, {
        protocol: "station.v1",
      });
      socket.binaryType = "arraybuffer";
      socket.onopen = () => socket.send("hello-from-upstream");
      socket.onmessage = (e) => {
        if (e.data === "bye") return socket.close(4001, "asked to");
        socket.send(typeof e.data === "string" ? `echo:${e.data}` : e.data);
      };
      return response;
    },
  );
  return {
    port: server.addr.port,
    seen,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** The key a browser sent; the gateway uses its own upstream. */
const BROWSER_KEY = "dGhlIHNhbXBsZSBub25jZQ==";

/** Sends a browser's upgrade request for /api/hub raw; returns the answer. */
function rawUpgrade(port: number, host: string, extra = ""): Promise<string> {
  return rawRequest(
    port,
    `GET /api/hub HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${BROWSER_KEY}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
}

function collect(ws: WebSocket) {
  const messages: (string | number[])[] = [];
  ws.binaryType = "arraybuffer";
  ws.onmessage = (e) =>
    messages.push(
      typeof e.data === "string" ? e.data : [...new Uint8Array(e.data)],
    );
  const closed = new Promise<CloseEvent>((r) =>
    ws.onclose = (e) => r(e as CloseEvent)
  );
  const opened = new Promise<void>((r, j) => {
    ws.onopen = () => r();
    ws.onerror = () => j(new Error("websocket error"));
  });
  return { messages, closed, opened };
}

Deno.test("WebSocket through /api/: text, binary, subprotocol, close codes", async () => {
  await using up = startWsUpstream();
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${up.port}`,
  });
  const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/api/hub?id=7`, [
    "station.v1",
    "other",
  ]);
  const c = collect(ws);
  await c.opened;
  strictEqual(ws.protocol, "station.v1");
  ws.send("ping-from-browser");
  ws.send(new Uint8Array([1, 2, 3]));
  await waitFor(() => c.messages.length === 3);
  deepStrictEqual(c.messages, [
    "hello-from-upstream",
    "echo:ping-from-browser",
    [1, 2, 3],
  ]);
  ws.send("bye");
  const closed = await c.closed;
  strictEqual(closed.code, 4001);
  strictEqual(closed.reason, "asked to");
  deepStrictEqual(up.seen[0]!.protocol, "station.v1, other");
  strictEqual(up.seen[0]!.host, `127.0.0.1:${up.port}`);
  await waitFor(() => gw.accessLines.length === 1);
  match(gw.accessLines[0]!, /"GET \/api\/hub\?id=7 HTTP\/1\.1" 101 \d+ /);
  strictEqual(gw.errorLines.length, 0);
});

Deno.test("WebSocket through /api/: the browser closing ends the upstream side", async () => {
  let upstreamClosed = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onclose = (e) => upstreamClosed = (e as CloseEvent).code;
      return response;
    },
  );
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${server.addr.port}`,
    });
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/api/ws`);
    const c = collect(ws);
    await c.opened;
    ws.close(4002, "leaving");
    await c.closed;
    await waitFor(() => upstreamClosed !== 0);
    strictEqual(upstreamClosed, 4002);
  } finally {
    await server.shutdown();
  }
});

Deno.test("WebSocket to a refused upstream: 502 and the connect() failed line", async () => {
  const dead = refusedPort();
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
  });
  const res = await rawUpgrade(
    gw.port,
    "localhost:8081",
    "Origin: http://localhost:8081\r\n",
  );
  match(res, /^HTTP\/1\.1 502 /);
  const os = Deno.build.os === "windows"
    ? "10061: No connection could be made because the target machine actively refused it"
    : "111: Connection refused";
  deepStrictEqual(gw.errorLines.map(maskErrorLine), [
    `TIME [error] PID#TID: *N connect() failed (${os}) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "GET /api/hub HTTP/1.1", upstream: "http://127.0.0.1:${dead}/hub", host: "localhost:8081"`,
  ]);
});

Deno.test("WebSocket to an upstream that will not upgrade: its answer is relayed", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response("websocket please", {
        status: 426,
        headers: { upgrade: "websocket" },
      }),
  );
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${server.addr.port}`,
    });
    const res = await rawUpgrade(gw.port, "localhost");
    match(res, /^HTTP\/1\.1 426 /);
    match(res, /websocket please/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("WebSocket upstream with a wrong Sec-WebSocket-Accept: 502 and an invalid header line", async () => {
  await using up = startRawUpstream(async (conn, _i, self) => {
    const head = await readHead(conn);
    if (head === null) return;
    self.heads.push(head);
    await writeText(
      conn,
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Accept: d3JvbmcgYWNjZXB0IHZhbHVlIQ==\r\n\r\n",
    );
  });
  await using gw = await startGateway({ upstreamUrl: up.origin });
  const res = await rawUpgrade(gw.port, "localhost");
  match(res, /^HTTP\/1\.1 502 /);
  strictEqual(up.heads.length, 1);
  // The browser's key goes upstream, as nginx passes it; the accept value
  // the upstream sent does not answer it.
  match(up.heads[0]!, new RegExp(BROWSER_KEY));
  await waitFor(() => gw.errorLines.length >= 1, 2000);
  deepStrictEqual(gw.errorLines.map(maskErrorLine), [
    `TIME [error] PID#TID: *N upstream sent invalid header while reading response header from upstream, client: 127.0.0.1, server: localhost, request: "GET /api/hub HTTP/1.1", upstream: "${up.origin}/hub", host: "localhost"`,
  ]);
});

Deno.test("WebSocket idle past the read timeout: closed, with nginx's line", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const { response } = Deno.upgradeWebSocket(req);
      return response; // says nothing
    },
  );
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${server.addr.port}`,
      timeouts: { readMs: 300 },
    });
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/api/quiet`);
    const c = collect(ws);
    await c.opened;
    const closed = await c.closed;
    strictEqual(closed.code, 1001);
    match(
      gw.errorLines[0]!,
      /upstream timed out \([^)]+\) while proxying upgraded connection, client: 127\.0\.0\.1, server: localhost, request: "GET \/api\/quiet HTTP\/1\.1", upstream: "http:\/\/127\.0\.0\.1:\d+\/quiet"/,
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("server-sent events reach the client as each event is sent", async () => {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => release = r);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => {
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode("data: first\n\n"));
          await gate; // the second event waits until the client saw the first
          controller.enqueue(new TextEncoder().encode("data: second\n\n"));
          controller.close();
        },
      });
      return new Response(body, {
        headers: {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
        },
      });
    },
  );
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${server.addr.port}`,
    });
    const res = await fetch(`${gw.url}/api/events`);
    strictEqual(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const deadline = Date.now() + 3000;
    while (!text.includes("first") && Date.now() < deadline) {
      text += (await reader.read()).value ?? "";
    }
    match(text, /data: first/);
    strictEqual(text.includes("second"), false);
    release();
    while (!text.includes("second") && Date.now() < deadline) {
      text += (await reader.read()).value ?? "";
    }
    match(text, /data: second/);
    await reader.cancel();
  } finally {
    await server.shutdown();
  }
});

Deno.test("Upgrade: websocket without Connection: Upgrade goes upstream as a plain GET", async () => {
  await using up = startRawUpstream(async (conn, _i, self) => {
    const head = await readHead(conn);
    if (head === null) return;
    self.heads.push(head);
    await writeText(
      conn,
      "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno",
    );
  });
  await using gw = await startGateway({ upstreamUrl: up.origin });
  for (const connection of ["", "Connection: keep-alive\r\n"]) {
    const res = await rawRequest(
      gw.port,
      `GET /api/hub HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n${connection}` +
        `Sec-WebSocket-Key: ${BROWSER_KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    match(res, /^HTTP\/1\.1 426 /, connection);
  }
  strictEqual(up.heads.length, 2);
  for (const head of up.heads) doesNotMatch(head, /^upgrade:/im);
  deepStrictEqual(gw.errorLines, []);
});
