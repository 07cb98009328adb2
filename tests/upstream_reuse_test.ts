/**
 * What a kept upstream connection and a long upload meet over real sockets:
 * an upstream that closes a kept connection as a request arrives (the
 * idle-close race), and one that answers an upload before reading it.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  readHead,
  startGateway,
  startRawUpstream,
  writeText,
} from "./_utils.ts";
import { NON_IDEMPOTENT_IDLE_MS } from "../src/upstream/pool.ts";

/** Reads a head and its Content-Length body; `null` when the peer closed. */
async function readRequest(
  conn: Deno.Conn,
  pending: { bytes: Uint8Array },
): Promise<{ head: string; body: string } | null> {
  const buf = new Uint8Array(64 * 1024);
  const append = (chunk: Uint8Array) => {
    const next = new Uint8Array(pending.bytes.length + chunk.length);
    next.set(pending.bytes);
    next.set(chunk, pending.bytes.length);
    pending.bytes = next;
  };
  const text = () => new TextDecoder().decode(pending.bytes);
  while (!text().includes("\r\n\r\n")) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return null;
    append(buf.subarray(0, n));
  }
  const end = text().indexOf("\r\n\r\n") + 4;
  const head = text().slice(0, end);
  const length = Number(head.match(/\r\ncontent-length: (\d+)/i)?.[1] ?? 0);
  while (pending.bytes.length < end + length) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return null;
    append(buf.subarray(0, n));
  }
  const body = new TextDecoder().decode(
    pending.bytes.subarray(end, end + length),
  );
  pending.bytes = pending.bytes.subarray(end + length);
  return { head, body };
}

Deno.test("kept connection closed as a request arrives: no request fails, and none is processed twice", async (t) => {
  // Each connection answers its first request and keeps the connection;
  // the next request on it meets the close the upstream had decided on
  // while the connection was idle, as an application server's idle timer.
  // The requests come as far apart as an idle timeout can be short: a
  // non-idempotent one takes no kept connection then.
  const cases: [string, number][] = [
    ["GET", 0],
    ["POST", 0],
    ["POST", 10],
    ["POST", 100_000],
    ["PATCH", 20],
    ["PUT", 20],
    ["DELETE", 5],
    ["LOCK", 5],
  ];
  for (const closeWhen of ["before reading", "after reading"] as const) {
    for (const [method, size] of cases) {
      await t.step(`${method} ${size} bytes, closed ${closeWhen}`, async () => {
        const bodies: string[] = [];
        await using up = startRawUpstream(async (conn) => {
          const pending = { bytes: new Uint8Array(0) };
          const first = await readRequest(conn, pending);
          if (first === null) return;
          bodies.push(first.body);
          await writeText(
            conn,
            `HTTP/1.1 200 OK\r\nContent-Length: ${first.body.length}\r\n\r\n${first.body}`,
          );
          if (closeWhen === "after reading") await readRequest(conn, pending);
          else await conn.read(new Uint8Array(1)).catch(() => null);
        });
        let clock = 0;
        await using gw = await startGateway({
          upstreamUrl: up.origin,
          now: () => clock,
        });
        const statuses = [];
        const answers = [];
        for (let i = 0; i < 3; i++) {
          clock += NON_IDEMPOTENT_IDLE_MS;
          const body = String(i).repeat(size);
          const res = await fetch(`${gw.url}/api/x`, {
            method,
            ...(size > 0 ? { body } : {}),
          });
          statuses.push(res.status);
          answers.push(await res.text());
        }
        deepStrictEqual(statuses, [200, 200, 200]);
        deepStrictEqual(answers, [0, 1, 2].map((i) => String(i).repeat(size)));
        // Each body reached the upstream whole, and was processed once.
        deepStrictEqual(bodies, [0, 1, 2].map((i) => String(i).repeat(size)));
        // A non-idempotent request meets no connection kept that long.
        if (["POST", "PATCH", "LOCK"].includes(method)) {
          strictEqual(up.connections, 3);
        }
        deepStrictEqual(
          gw.errorLines.filter((l) => !l.includes("temporary file")),
          [],
        );
      });
    }
  }
});

Deno.test("a non-idempotent request takes a kept connection used too recently for an idle close", async (t) => {
  // [method, ms between requests, connections]: within the bound each
  // request reuses the one connection; from the bound on, each opens one.
  const cases: [string, number, number][] = [
    ["POST", 0, 1],
    ["POST", NON_IDEMPOTENT_IDLE_MS - 1, 1],
    ["POST", NON_IDEMPOTENT_IDLE_MS, 3],
    ["PATCH", 10, 1],
    ["LOCK", 10, 1],
    ["GET", NON_IDEMPOTENT_IDLE_MS * 10, 1],
  ];
  for (const [method, apart, connections] of cases) {
    await t.step(`${method} ${apart} ms apart: ${connections}`, async () => {
      await using up = startRawUpstream(async (conn) => {
        const pending = { bytes: new Uint8Array(0) };
        for (let i = 0; i < 3; i++) {
          const request = await readRequest(conn, pending);
          if (request === null) return;
          await writeText(
            conn,
            `HTTP/1.1 200 OK\r\nContent-Length: ${request.body.length}\r\n\r\n${request.body}`,
          );
        }
      });
      let clock = 0;
      await using gw = await startGateway({
        upstreamUrl: up.origin,
        now: () => clock,
      });
      for (let i = 0; i < 3; i++) {
        clock += apart;
        const res = await fetch(`${gw.url}/api/x`, {
          method,
          ...(method === "GET" ? {} : { body: `{"n":${i}}` }),
        });
        strictEqual(res.status, 200);
        strictEqual(await res.text(), method === "GET" ? "" : `{"n":${i}}`);
      }
      strictEqual(up.connections, connections);
      deepStrictEqual(gw.errorLines, []);
    });
  }
});

Deno.test("an upstream seen closing a connection idle N ms: a POST takes none idle N/2", async () => {
  // The first connection answers once, then reads the next request and
  // closes (its idle timer, 400 ms of the test's clock); the others keep.
  await using up = startRawUpstream(async (conn, index) => {
    const pending = { bytes: new Uint8Array(0) };
    for (let i = 0; i < 3; i++) {
      const request = await readRequest(conn, pending);
      if (request === null || (index === 0 && i === 1)) return;
      await writeText(
        conn,
        `HTTP/1.1 200 OK\r\nContent-Length: ${request.body.length}\r\n\r\n${request.body}`,
      );
    }
  });
  let clock = 0;
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    now: () => clock,
  });
  const statuses = [];
  // [ms since the last request, method]: the GET after 400 ms meets the
  // close and is sent again on a second connection; 300 ms later a POST
  // opens a third (the second is idle past 200 ms); 100 ms later a POST
  // reuses the third.
  for (
    const [apart, method] of [[0, "GET"], [400, "GET"], [300, "POST"], [
      100,
      "POST",
    ]] as const
  ) {
    clock += apart;
    const res = await fetch(`${gw.url}/api/x`, {
      method,
      ...(method === "POST" ? { body: "{}" } : {}),
    });
    statuses.push(res.status);
    await res.body?.cancel();
  }
  deepStrictEqual(statuses, [200, 200, 200, 200]);
  strictEqual(up.connections, 3);
  deepStrictEqual(gw.errorLines, []);
});

Deno.test("an upload the upstream refuses before reading it: its answer is relayed, not a 502", async (t) => {
  const refusal =
    "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nnope\r\n";
  const shapes = {
    "answers and closes": async (conn: Deno.Conn) => {
      await readHead(conn);
      await writeText(conn, refusal);
    },
    "answers and keeps reading nothing": async (conn: Deno.Conn) => {
      await readHead(conn);
      await writeText(conn, refusal);
      // Holds the connection open, unread, until the gateway closes it.
      await conn.read(new Uint8Array(0)).catch(() => null);
      await conn.readable.cancel().catch(() => {});
    },
  };
  for (const [shape, script] of Object.entries(shapes)) {
    for (const buffering of [true, false]) {
      await t.step(
        `${shape}, request buffering ${buffering ? "on" : "off"}`,
        async () => {
          await using up = startRawUpstream(script);
          await using gw = await startGateway({
            upstreamUrl: up.origin,
            proxyRequestBuffering: buffering,
          });
          const body = new Uint8Array(900_000).fill(97);
          const res = await fetch(`${gw.url}/api/upload`, {
            method: "POST",
            body,
          });
          strictEqual(res.status, 401);
          strictEqual(await res.text(), "nope\r\n");
          deepStrictEqual(
            gw.errorLines.filter((l) => !l.includes("temporary file")),
            [],
          );
          match(
            gw.accessLines.at(-1) ?? "",
            /"POST \/api\/upload HTTP\/1.1" 401 6 /,
          );
        },
      );
    }
  }
});
