/**
 * The idle-close race, at full size: an upstream that closes a kept
 * connection after `--idle-ms` without a request (as application servers
 * do: Node 5 s, Tomcat 20 s), and requests spaced across that moment
 * (idle ± 0.5 %), half POST and half GET, through an in-process gateway.
 * Prints the statuses and exits 1 on any that is not 200.
 *
 * ```sh
 * npx --yes deno@2.9.6 run -A scripts/keepalive_race.ts              # 1,000 requests, 1 s idle
 * npx --yes deno@2.9.6 run -A scripts/keepalive_race.ts --idle-ms 200 --requests 200
 * ```
 *
 * Every loop is bounded: `--requests` in `--clients` parallel loops, each
 * request with a 10 s deadline.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startGateway } from "../tests/_utils.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "idle-ms": { type: "string", default: "1000" },
    requests: { type: "string", default: "1000" },
    clients: { type: "string", default: "20" },
  },
});
const idleMs = Number(values["idle-ms"]);
const total = Number(values.requests);
const clients = Number(values.clients);

/** An upstream that answers every request and closes a connection idle for idleMs. */
function startIdleClosingUpstream(): { port: number; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const tasks: Promise<void>[] = [];
  const serve = async (conn: Deno.Conn) => {
    const buf = new Uint8Array(64 * 1024);
    let pending = "";
    let timer = setTimeout(() => conn.close(), idleMs);
    try {
      while (true) {
        const n = await conn.read(buf);
        if (n === null) return;
        clearTimeout(timer);
        pending += new TextDecoder().decode(buf.subarray(0, n));
        while (true) {
          const end = pending.indexOf("\r\n\r\n");
          if (end < 0) break;
          const length = Number(
            pending.slice(0, end).match(/\r\ncontent-length: (\d+)/i)?.[1] ??
              0,
          );
          if (pending.length < end + 4 + length) break;
          pending = pending.slice(end + 4 + length);
          const answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
          await conn.write(new TextEncoder().encode(answer));
        }
        timer = setTimeout(() => conn.close(), idleMs);
      }
    } catch {
      // closed by the idle timer or the peer
    } finally {
      clearTimeout(timer);
      conns.delete(conn);
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        tasks.push(serve(conn));
      }
    } catch { /* closed */ }
  })();
  return {
    port: listener.addr.port,
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await Promise.allSettled(tasks);
      await accepting;
    },
  };
}

const upstream = startIdleClosingUpstream();
const gw = await startGateway({
  upstreamUrl: `http://127.0.0.1:${upstream.port}`,
});
const statuses = new Map<string, number>();
let sent = 0;
try {
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (sent < total) {
        const i = sent++;
        const post = (i + client) % 2 === 0;
        // Spaced across the upstream's idle close: idle ± 0.5 %.
        const wait = idleMs * (0.995 + 0.01 * Math.random());
        await new Promise((r) => setTimeout(r, wait));
        let key: string;
        try {
          const res = await fetch(`${gw.url}/api/race`, {
            method: post ? "POST" : "GET",
            ...(post ? { body: `{"n":${i}}` } : {}),
            signal: AbortSignal.timeout(10_000),
          });
          await res.body?.cancel();
          key = `${post ? "POST" : "GET"} ${res.status}`;
        } catch (error) {
          key = `${post ? "POST" : "GET"} ${(error as Error).name}`;
        }
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    }),
  );
} finally {
  await gw[Symbol.asyncDispose]();
  await upstream.close();
}
const failed = [...statuses].filter(([k]) => !k.endsWith(" 200"));
const lines = [...statuses].sort().map(([k, n]) => `${k}: ${n}`);
Deno.stdout.writeSync(
  new TextEncoder().encode(
    `${total} requests, idle close ${idleMs} ms\n${lines.join("\n")}\n`,
  ),
);
if (failed.length > 0) Deno.exitCode = 1;
