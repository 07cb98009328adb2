/**
 * The SSI filter at its edges, in a gateway started from its nginx.conf or
 * on a page and includes made in the test: a WebSocket tunnel under
 * `ssi_types *` passes untouched, a client that leaves while an include is
 * pending or kept ends the page (nothing more runs, the include's body is
 * released), and an include that fails is logged and, failing mid-body,
 * cuts the page as `ngx_http_terminate_request` does.
 */
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort } from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { ssiFilter, type SsiFilterInput } from "../../src/ssi/mod.ts";
import { type RequestVars, Variables } from "../../src/engine/mod.ts";

const CONF = {
  types: new Set(["text/html"]),
  silentErrors: false,
  lastModified: false,
  valueLength: 255,
  scope: new Variables(new Map(), new Set()),
};

/** A page filtered with its includes answered by `include`, its lines kept. */
function page(
  text: string,
  include: NonNullable<SsiFilterInput["include"]>,
): { response: Response; lines: string[] } {
  const lines: string[] = [];
  const response = ssiFilter(
    new Response(text, { headers: { "content-type": "text/html" } }),
    {
      conf: CONF,
      vars: { uri: "/p" } as RequestVars,
      head: false,
      log: (m) => lines.push(m),
      include,
    },
  );
  return { response, lines };
}

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("a WebSocket under ssi_types * is switched as without SSI", async () => {
  const sockets = new Set<WebSocket>();
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      sockets.add(socket);
      socket.onmessage = (e) => socket.send(`echo:${e.data}`);
      socket.onclose = () => sockets.delete(socket);
      return response;
    },
  );
  const dir = await Deno.makeTempDir({ prefix: "ssi-ws-" });
  try {
    const port = freePort();
    await Deno.mkdir(join(dir, "logs"), { recursive: true });
    await Deno.mkdir(join(dir, "conf"), { recursive: true });
    const conf = join(dir, "conf", "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}
http {
  error_log ${dir}/error.log info;
  server {
    listen 127.0.0.1:${port};
    ssi on;
    ssi_types *;
    location /ws/ {
      proxy_pass http://127.0.0.1:${upstream.addr.port}/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection upgrade;
    }
  }
}
`,
    );
    await using gw = await startMain(["--nginx-conf", conf]);
    // A raw client: a gateway that fails the upgrade answers nothing, and
    // the timer bounds the wait for it.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    const timer = setTimeout(() => conn.close(), 10_000);
    let head = "";
    try {
      await conn.write(bytes(
        "GET /ws/ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n" +
          "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      ));
      const buf = new Uint8Array(4096);
      // Bounded by the timer, which closes the connection.
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        head += new TextDecoder().decode(buf.subarray(0, n));
      }
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch {
        // closed by the timer
      }
    }
    strictEqual(head.split("\r\n")[0], "HTTP/1.1 101 Switching Protocols");
  } finally {
    for (const s of sockets) s.close();
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a client leaving during include set= ends the page: no include after it runs", async () => {
  const started: string[] = [];
  const gate = Promise.withResolvers<void>();
  const kept = Promise.withResolvers<void>();
  const { response, lines } = page(
    'a<!--# include virtual="/a" set="v" -->b<!--# include virtual="/b" -->c',
    (uri) => {
      started.push(uri);
      if (uri !== "/a") return Promise.reject(new Error("never made"));
      return Promise.resolve(
        new Response(
          new ReadableStream({
            async pull(c) {
              kept.resolve();
              await gate.promise;
              c.enqueue(bytes("A"));
              c.close();
            },
            // Pulled only when read: `kept` says the answer is being kept.
          }, { highWaterMark: 0 }),
        ),
      );
    },
  );
  const reader = response.body!.getReader();
  strictEqual(new TextDecoder().decode((await reader.read()).value), "a");
  const next = reader.read();
  // The answer is being kept when the client leaves.
  await kept.promise;
  await reader.cancel("client left");
  gate.resolve();
  deepStrictEqual(await next, { done: true, value: undefined });
  // What the page goes on to do after the kept answer is all in
  // microtasks (no I/O): a macrotask runs after every one of them.
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(started, ["/a"]);
  deepStrictEqual(lines, []);
});

Deno.test("a client leaving while an include waits to be sent releases its body", async () => {
  const released = Promise.withResolvers<void>();
  const { response } = page(
    "x".repeat(17000) + '<!--# include virtual="/inc" -->y',
    () =>
      Promise.resolve(
        new Response(
          // Stands for an open file: held until read to its end or cancelled.
          new ReadableStream({
            pull: (c) => c.enqueue(new Uint8Array(10)),
            cancel: () => released.resolve(),
          }),
        ),
      ),
  );
  const reader = response.body!.getReader();
  strictEqual((await reader.read()).value?.length, 17000);
  await reader.cancel("client left");
  await released.promise;
});

Deno.test("an include that fails is logged, and one failing in its body cuts the page", async () => {
  const rejected = page(
    'a<!--# include virtual="/b" -->c',
    () => Promise.reject(new TypeError("no subrequest")),
  );
  strictEqual(await rejected.response.text(), "ac");
  strictEqual(rejected.lines.length, 1);
  ok(
    rejected.lines[0]!.startsWith("unexpected error: TypeError: no subrequest"),
  );
  for (const set of ["", ' set="v"']) {
    const broken = page(
      `a<!--# include virtual="/b"${set} -->c`,
      () =>
        Promise.resolve(
          new Response(
            new ReadableStream({
              start(c) {
                c.enqueue(bytes("PART"));
                c.error(new TypeError("body failed"));
              },
            }),
          ),
        ),
    );
    const reader = broken.response.body!.getReader();
    let got = "";
    // Bounded by the page: each turn reads a piece of it or fails.
    await rejects(async () => {
      for (;;) {
        const read = await reader.read();
        if (read.done) break;
        got += new TextDecoder().decode(read.value);
      }
    }, /body failed/);
    strictEqual(got, "a");
    strictEqual(broken.lines.length, 1, set);
    ok(broken.lines[0]!.startsWith("unexpected error: TypeError: body failed"));
  }
});
