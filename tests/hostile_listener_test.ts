/**
 * The listener under descriptor exhaustion: a spawned gateway with a low
 * descriptor limit (`prlimit --nofile`) is flooded with half-sent requests
 * until accept() fails.
 */
import { match, ok, strictEqual } from "node:assert/strict";
import type { MainOptions } from "../src/main.ts";
import { type GatewayProcess, waitFor } from "./_utils.ts";
import { spawnGatewayWith } from "./_spawn_options.ts";

/** Deno and the gateway use about 27 descriptors; the rest are for clients. */
const NOFILE = 96;
const FLOOD = 200;

const hasPrlimit = Deno.build.os === "linux" &&
  (() => {
    try {
      return new Deno.Command("prlimit", { args: ["--version"] }).outputSync()
        .success;
    } catch {
      return false;
    }
  })();

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

Deno.test(
  "ListenerSet listens again within 2 s once descriptors are free, logging accept4() like nginx",
  { ignore: !hasPrlimit },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await using gw = await spawnLimited(dir);
      const conns = await flood(gw.port);
      const log = () => Deno.readTextFileSync(`${dir}/error.log`);
      try {
        await waitFor(() => /accept4\(\) failed/.test(log()), 5000);
      } catch {
        // Asserted below with the log in the message.
      }
      closeAll(conns);
      const ms = await timeToAnswer(gw.port, 5000);
      ok(ms >= 0 && ms < 2000, `answered after ${ms} ms; log: ${log()}`);
      match(
        log(),
        /\[crit\] \d+#\d+: accept4\(\) failed \(24: Too many open files\)\n/,
      );
      strictEqual(/unhandled|Error:|\n\s+at /.test(log()), false, log());
      gw.child.kill("SIGTERM");
      strictEqual((await gw.child.status).code, 0);
      strictEqual(/\bat |Error/.test(gw.output()), false, gw.output());
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "ListenerSet exits 1 with an [emerg] line when the listener stays down",
  { ignore: !hasPrlimit },
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      await using gw = await spawnLimited(dir, {
        faultLimits: { listenerGiveUpMs: 1000 },
      });
      const conns = await flood(gw.port);
      // Shutting the failed server down frees the descriptors its half-sent
      // requests held, so the flood is renewed until the gateway gives up.
      let knocking = true;
      const knocks = (async () => {
        while (knocking && conns.length < 10 * FLOOD) {
          conns.push(...await flood(gw.port));
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      try {
        const status = await Promise.race([
          gw.child.status,
          new Promise<null>((r) => setTimeout(r, 10_000, null)),
        ]);
        strictEqual(
          status?.code,
          1,
          await Deno.readTextFile(`${dir}/error.log`),
        );
      } finally {
        knocking = false;
        await knocks;
        closeAll(conns);
      }
      match(
        await Deno.readTextFile(`${dir}/error.log`),
        /\[emerg\] \d+#\d+: accept4\(\) failed \(24: Too many open files\) while accepting on 127\.0\.0\.1:\d+, not restored for \d+ s, exiting\n/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
