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
