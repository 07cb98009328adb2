/** The handler's own policies, over a real socket. */
import { match, strictEqual } from "node:assert/strict";
import { parseUpstreamServer } from "../src/config/addresses.ts";
import { ConnectionCounter } from "../src/log/connection_counter.ts";
import { createGatewayHandler } from "../src/gateway.ts";
import { testConfig } from "./_utils.ts";
import { createLogger } from "../src/log/logger.ts";
import type { UpstreamTransport } from "../src/upstream/transport.ts";

Deno.test("createGatewayHandler() turns an unexpected exception into 500 and an [alert] line, and keeps serving", async () => {
  const lines: string[] = [];
  // A client that fails with a plain TypeError, as a bug would: this tests
  // the handler's last line of defence, not the upstream leg.
  const broken: UpstreamTransport = {
    send: () => Promise.reject(new TypeError("boom: a bug")),
    idleCount: 0,
    close() {},
  };
  const handler = createGatewayHandler(
    testConfig({
      upstreams: [parseUpstreamServer("http://127.0.0.1:9")],
    }),
    {
      port: 8081,
      version: "test",
    },
    {
      logger: createLogger({
        errorLog: { write: (l: string) => lines.push(l) },
        accessLog: null,
      }),
      counter: new ConnectionCounter(),
      transport: () => broken,
    },
  );
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    handler,
  );
  try {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(
        `http://127.0.0.1:${server.addr.port}/api/loginms`,
        { method: "POST", body: "{}" },
      );
      strictEqual(res.status, 500);
      match(await res.text(), /<h1>500 Internal Server Error<\/h1>/);
    }
    strictEqual(lines.length, 2);
    match(
      lines[0]!,
      /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[alert\] \d+#\d+: \*\d+ unexpected error: TypeError: boom: a bug .*, client: 127\.0\.0\.1, server: localhost, request: "POST \/api\/loginms HTTP\/1\.1", host: "127\.0\.0\.1:\d+"$/,
    );
    strictEqual(lines[0]!.includes("\n"), false);
  } finally {
    await server.shutdown();
  }
});

Deno.test("createGatewayHandler() hands back an answer made without a wait as it is, and a defect thrown while it is made as a 500 and an [alert] line", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/page.html`, "<p>station</p>");
  const lines: string[] = [];
  // The status document reads the connection count inside the handler's
  // `try`: a count that throws is a defect thrown while a synchronous
  // answer is made.
  class BrokenCounter extends ConnectionCounter {
    override get size(): number {
      throw new TypeError("boom: a bug");
    }
  }
  const handler = createGatewayHandler(
    testConfig({ root: dir, statusPath: "/__status" }),
    { port: 8081, version: "test" },
    {
      logger: createLogger({
        errorLog: { write: (l: string) => lines.push(l) },
        accessLog: null,
      }),
      counter: new BrokenCounter(),
    },
  );
  // Each request on a connection of its own: the 500 ends its connection,
  // as nginx's does.
  let port = 50000;
  const ask = (path: string) =>
    handler(
      new Request(`http://localhost:8081${path}`, {
        headers: { host: "localhost:8081" },
      }),
      {
        remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: port++ },
        completed: Promise.resolve(),
      },
    );
  try {
    // A folder changed a moment ago is waited for (static/settled_proof.ts):
    // the first answer may come later.
    const first = await ask("/page.html");
    strictEqual(first.status, 200);
    await first.body?.cancel();
    for (
      const [path, status, body] of [
        ["/page.html", 200, "<p>station</p>"],
        ["/__status", 500, "500 Internal Server Error"],
        ["/page.html", 200, "<p>station</p>"],
      ] as const
    ) {
      const answer = ask(path);
      strictEqual(answer instanceof Response, true, path);
      const res = await answer;
      strictEqual(res.status, status, path);
      match(await res.text(), new RegExp(body));
    }
    strictEqual(lines.length, 1);
    match(
      lines[0]!,
      /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[alert\] \d+#\d+: \*\d+ unexpected error: TypeError: boom: a bug .*, client: 127\.0\.0\.1, server: localhost, request: "GET \/__status HTTP\/1\.1", host: "localhost:8081"$/,
    );
  } finally {
    handler.close();
    await Deno.remove(dir, { recursive: true });
  }
});
