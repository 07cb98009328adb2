/**
 * A client that sends wrong passwords as fast as it can must not hold back
 * other clients: over real connections, while its bcrypt checks are queued,
 * another client's request without a check and another client's right
 * password are answered, and the flood's queue has hardly moved.
 */

import { strictEqual } from "node:assert/strict";
import { PasswordChecker, runAccessPhase } from "../../src/access/mod.ts";
import { constantValue } from "../../src/engine/mod.ts";
import { rawRequest, waitFor } from "../_utils.ts";

// bcrypt of "right" (libxcrypt): cost 12 (seconds a check, so the flood's
// queue cannot drain while the test runs) and cost 4.
const SLOW = "$2y$12$abcdefghijklmnopqrstuu3ZNTWactmkRXVB8K.1w4IlxX.O8lI12";
const FAST = "$2y$04$abcdefghijklmnopqrstuuFmEfrkTQnczNzw475xE2VhDrK1uwJiC";
const FLOOD = 16;

function head(auth: string, client: string, path = "/auth"): string {
  return `GET ${path} HTTP/1.1\r\nHost: s\r\nAuthorization: Basic ${
    btoa(auth)
  }\r\nX-Client: ${client}\r\nConnection: close\r\n\r\n`;
}

Deno.test("wrong passwords from one client do not hold back other clients", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-flood-" });
  await Deno.writeTextFile(`${dir}/users`, `ann:${SLOW}\nbob:${FAST}\n`);
  const checker = new PasswordChecker({ maxPendingPerClient: FLOOD });
  const conf = {
    rules: null,
    satisfy: "all" as const,
    authBasic: {
      realm: constantValue("Station"),
      userFile: constantValue(`${dir}/users`),
      confPrefix: dir,
    },
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      if (new URL(req.url).pathname === "/free") return new Response("free");
      // Clients are named by a header: every test client is 127.0.0.1.
      const decision = await runAccessPhase(conf, {
        vars: {} as never,
        authorization: req.headers.get("authorization"),
        remoteAddr: req.headers.get("x-client") ?? "",
        signal: req.signal,
      }, checker);
      return new Response(null, { status: decision.status || 204 });
    },
  );
  const port = server.addr.port;
  const flood: Deno.Conn[] = [];
  try {
    for (let i = 0; i < FLOOD; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      flood.push(conn);
      await conn.write(
        new TextEncoder().encode(head(`ann:wrong-${i}`, "flood")),
      );
    }
    await waitFor(() => checker.pending === FLOOD, 10_000);
    // One more from the flooding client: its queue is full.
    const over = await rawRequest(port, head("ann:wrong-x", "flood"));
    strictEqual(over.slice(9, 12), "503");
    const free = await rawRequest(port, head("bob:x", "other", "/free"));
    strictEqual(free.slice(9, 12), "200");
    const right = await rawRequest(port, head("bob:right", "other"), 30_000);
    strictEqual(right.slice(9, 12), "204");
    // Meanwhile the flood got its turns, but a cost-12 check takes seconds.
    strictEqual(
      checker.pending >= FLOOD - 2,
      true,
      `pending ${checker.pending}`,
    );
  } finally {
    // The flood goes away: its queued checks are dropped, not computed.
    for (const conn of flood) conn.close();
    await waitFor(() => checker.pending === 0, 30_000);
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
