/**
 * The listener under descriptor exhaustion: a spawned gateway with a low
 * descriptor limit (`prlimit --nofile`) is flooded with half-sent requests
 * until accept() fails, again after every re-listen. One process shows it
 * all: descriptors are the process's, and exhaustion never ends it whatever
 * the give-up time (`decideFault()`).
 */
import { match, ok, strictEqual } from "node:assert/strict";
import type { MainOptions } from "../src/main.ts";
import type { GatewayProcess } from "./_utils.ts";
import { spawnGatewayWith } from "./_spawn_options.ts";
import { hasPrlimit } from "./_prerequisites.ts";

/** Deno and the gateway use about 27 descriptors; the rest are for clients. */
const NOFILE = 96;
const FLOOD = 200;
/**
 * The first re-listen pause (`relistenMs`), doubling per failure: 50, 100
 * and 200 ms between the four failures, 400 ms before the last re-listen
 * (the gateway's own 0.5, 1, 2 and 4 s prove nothing more).
 */
const PAUSE_MS = 50;

/** Spawns the gateway with at most `NOFILE` descriptors. */
function spawnLimited(
  dir: string,
  options: MainOptions = {},
): Promise<GatewayProcess> {
  return spawnGatewayWith(options, [
    "--listen",
    "127.0.0.1:0",
    "--root",
    dir,
    "--error-log",
    `${dir}/error.log`,
    "--access-log",
    `${dir}/access.log`,
  ], ["prlimit", `--nofile=${NOFILE}:${NOFILE}`]);
}

/** Opens up to `FLOOD` connections, each with half a request head. */
async function flood(port: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  const half = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n");
  for (let i = 0; i < FLOOD; i++) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conns.push(conn);
      await conn.write(half);
    } catch {
      break; // the backlog is full or the listener is gone
    }
  }
  return conns;
}

function closeAll(conns: Deno.Conn[]): void {
  for (const conn of conns) {
    try {
      conn.close();
    } catch { /* reset by the gateway */ }
  }
}

/** Milliseconds until `GET /` is answered, or -1 after `limitMs`. */
async function timeToAnswer(port: number, limitMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < limitMs) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, {
        signal: AbortSignal.timeout(300),
      });
      await res.body?.cancel();
      return Date.now() - start;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return -1;
}

/** Sends `GET /` on an open connection and reads the status line. */
async function askOn(conn: Deno.Conn): Promise<string> {
  await conn.write(
    new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
  );
  const buf = new Uint8Array(64 * 1024);
  const n = await conn.read(buf);
  return n === null
    ? "closed"
    : new TextDecoder().decode(buf.subarray(0, n)).split("\r\n")[0]!;
}

Deno.test(
  "ListenerSet under descriptor exhaustion refilled after every re-listen: accept4() logged like nginx in a bounded number of lines, kept connections served, listening again once descriptors are free",
  { ignore: !hasPrlimit() },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/index.html`, "station\n");
      // A give-up as short as the first pause: the 4th failure comes at
      // least 50 + 100 + 200 ms into the spell, seven times the give-up,
      // and the process must outlive it.
      await using gw = await spawnLimited(dir, {
        faultLimits: { listenerGiveUpMs: PAUSE_MS },
        relistenMs: PAUSE_MS,
      });
      const log = () => Deno.readTextFileSync(`${dir}/error.log`);
      const kept = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
      const conns: Deno.Conn[] = [];
      try {
        strictEqual(await askOn(kept), "HTTP/1.1 200 OK");
        // Refill after every re-listen, until the listener has failed 4
        // times (pauses of 50, 100 and 200 ms between them) or 30 s.
        const failures = () => log().match(/accept4\(\) failed/g)?.length ?? 0;
        const started = Date.now();
        let rounds = 0;
        while (Date.now() - started < 30_000 && rounds < 300) {
          rounds++;
          conns.push(...await flood(gw.port));
          if (/4 times in a row/.test(log())) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        ok(/4 times in a row/.test(log()), log());
        // The 1st, 2nd and 4th failures are logged; the 3rd is not.
        strictEqual(failures(), 3, log());
        const status = await Promise.race([
          gw.child.status,
          new Promise<null>((r) => setTimeout(r, 0, null)),
        ]);
        strictEqual(status, null, `exited: ${log()}`);
        // The connection kept from before the first failure is served.
        strictEqual(await askOn(kept), "HTTP/1.1 200 OK", log());
      } finally {
        closeAll(conns);
      }
      const ms = await timeToAnswer(gw.port, 15_000);
      ok(ms >= 0, `not answered; log: ${log()}`);
      // Four failures and their re-listens: the 1st, 2nd and 4th of each
      // are logged, nothing else.
      // The first failure's line, as nginx writes it.
      match(
        log(),
        /\[crit\] \d+#\d+: accept4\(\) failed \(24: Too many open files\)\n/,
      );
      const lines = log().split("\n").filter((l) =>
        /accept4|bind\(\)|listening on/.test(l)
      );
      ok(lines.length <= 6, lines.join("\n"));
      strictEqual(
        /\[emerg\]|unhandled|Error:|\n\s+at /.test(log()),
        false,
        log(),
      );
      strictEqual(await askOn(kept), "HTTP/1.1 200 OK");
      kept.close();
      gw.child.kill("SIGTERM");
      strictEqual((await gw.child.status).code, 0);
      strictEqual(/\bat |Error/.test(gw.output()), false, gw.output());
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
