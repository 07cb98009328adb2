/**
 * The client tells a call's `onEnd` when its exchange is over after the
 * head (the server is freed then: `least_conn`'s count), whatever ends it:
 * the body read whole, with the head or streamed, chunked or to the
 * close; the upstream closing early; the read timeout; the reader
 * cancelling (the client left). Never before the body is over.
 */
import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { readHead, startRawUpstream, untilClosed } from "../_utils.ts";
import { writeText } from "../_utils.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { UpstreamCall } from "../../src/upstream/mod.ts";

/** [name, the answer, how the body is taken, whether it ends in an error] */
const CASES: [string, string, "read" | "cancel", boolean][] = [
  [
    "whole with the head",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "read",
    false,
  ],
  ["bodiless", "HTTP/1.1 204 No Content\r\n\r\n", "read", false],
  [
    "chunked",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n",
    "read",
    false,
  ],
  [
    "to the close",
    "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nok",
    "read",
    false,
  ],
  [
    "closed early",
    "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok",
    "read",
    true,
  ],
  ["timed out", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok", "read", true],
  [
    "cancelled",
    "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok",
    "cancel",
    false,
  ],
];

Deno.test("UpstreamClient tells onEnd once the exchange is over, however it ends", async (t) => {
  for (const [name, answer, take, fails] of CASES) {
    await t.step(name, async () => {
      const gone = Promise.withResolvers<void>();
      await using up = startRawUpstream(async (conn) => {
        await readHead(conn);
        await writeText(conn, answer);
        // The chunked answer's last chunk comes once the first was read.
        if (name === "chunked") return void await writeText(conn, "0\r\n\r\n");
        // A timed-out or cancelled body: held until the client gives up.
        if (name === "timed out" || name === "cancelled") {
          await Promise.race([untilClosed(conn), gone.promise]);
        }
      });
      // The head is read under a long timer and only the body under a
      // short one: the client reads its timers at each read, and a 300 ms
      // timer on the head fired under load before the upstream's answer
      // was read (the upstream runs on the same event loop).
      const timeouts = { connectMs: 5000, sendMs: 5000, readMs: 10_000 };
      const client = new UpstreamClient({
        hostname: "127.0.0.1",
        port: up.port,
        timeouts,
      });
      let ends = 0;
      const call: UpstreamCall = {
        method: "GET",
        path: "/",
        host: "x",
        headers: [],
        body: null,
        signal: new AbortController().signal,
        onBodyError: () => {},
        onBodyWarning: () => {},
        onEnd: () => void ends++,
      };
      try {
        const reply = await client.send(call);
        if (name === "timed out") timeouts.readMs = 300;
        const body = reply.body;
        if (body instanceof ReadableStream) {
          strictEqual(ends, 0, "told before the body is over");
          const reader = body.getReader();
          if (take === "cancel") {
            await reader.read();
            await reader.cancel();
          } else if (fails) {
            await rejects(async () => {
              while (!(await reader.read()).done);
            });
          } else {
            while (!(await reader.read()).done);
          }
        }
        deepStrictEqual(ends >= 1, true, `${name}: told ${ends} times`);
      } finally {
        gone.resolve();
        client.close();
      }
    });
  }
});
