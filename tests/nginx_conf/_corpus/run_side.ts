/**
 * One side of a comparison: the probes sent to one running server, what
 * its upstreams received for each, and the log lines it wrote meanwhile.
 *
 * @module
 */

import { join } from "node:path";
import { type Probe, send } from "./client.ts";
import { maskLogLine, type Names, type Outcome, outcome } from "./compare.ts";
import type { Running } from "./processes.ts";
import { type Station, stationTls } from "./station.ts";
import type { Received } from "./upstream.ts";

function logState(prefix: string): Map<string, number> {
  const sizes = new Map<string, number>();
  const dir = join(prefix, "logs");
  for (const e of Deno.readDirSync(dir)) {
    if (e.isFile && e.name.endsWith(".log")) {
      sizes.set(e.name, Deno.statSync(join(dir, e.name)).size);
    }
  }
  return sizes;
}

/** Log lines appended since `before`, file by file. */
function newLines(prefix: string, before: Map<string, number>): string[] {
  const out: string[] = [];
  const dir = join(prefix, "logs");
  for (
    const e of [...Deno.readDirSync(dir)].sort((a, b) =>
      a.name < b.name ? -1 : 1
    )
  ) {
    if (!e.isFile || !e.name.endsWith(".log")) continue;
    const bytes = Deno.readFileSync(join(dir, e.name));
    const text = new TextDecoder().decode(
      bytes.subarray(before.get(e.name) ?? 0),
    );
    out.push(
      ...text.split("\n").filter((l) => l !== "").map((l) => `${e.name}: ${l}`),
    );
  }
  return out;
}

/**
 * What nginx writes at `info` for a connection closed before a request: the
 * harness's readiness checks (connect, close) make them, at times nginx
 * chooses, so they are not the probes' lines.
 */
const READINESS_LINE =
  /\[info\] \d+#\d+: \*\d+ client closed connection while waiting for request/;

/** One side's station, names and upstream record. */
export interface Side {
  station: Station;
  names: Names;
  seen: Received[];
}

/**
 * Sends every probe to one running server, in order, and collects the
 * masked outcomes and the log lines written meanwhile.
 *
 * @param side The station, its names and its upstreams' record.
 * @param server The running server (nothing is sent unless it is ready).
 * @param probes The requests.
 * @param options Per-request timeout and strictness.
 * @param deadline No probe is sent past this time.
 * @returns The outcomes (probes, then the other listen ports) and log lines.
 */
export async function probeSide(
  side: Side,
  server: Running,
  probes: Probe[],
  options: { requestTimeoutMs: number; strict: boolean },
  deadline: number,
): Promise<{ outcomes: Outcome[]; logs: string[] }> {
  const before = logState(side.station.prefix);
  const outcomes: Outcome[] = [];
  const port = side.names.listen[0]!;
  // A TLS port is spoken to over TLS, as a browser does to https://.
  const tls = stationTls(side.station.tree, side.station.prefix);
  const trust = (p: number) => tls.ports.has(p) ? tls.caCerts : undefined;
  for (const probe of probes) {
    if (Date.now() > deadline || !server.ready) break;
    const start = side.seen.length;
    const seen = await send(
      port,
      probe,
      "localhost",
      options.requestTimeoutMs,
      trust(port),
    );
    outcomes.push(
      outcome(
        seen,
        side.seen.slice(start),
        side.names,
        options.strict,
        tls.ports.has(port),
      ),
    );
  }
  // The other ports: the client app's page.
  for (const other of side.names.listen.slice(1)) {
    if (Date.now() > deadline) break;
    const start = side.seen.length;
    const seen = await send(
      other,
      probes[0]!,
      "localhost",
      options.requestTimeoutMs,
      trust(other),
    );
    outcomes.push(
      outcome(
        seen,
        side.seen.slice(start),
        side.names,
        options.strict,
        tls.ports.has(other),
      ),
    );
  }
  // The access log is written after the response: wait, bounded, for one
  // line per request before reading.
  const end = Math.min(deadline, Date.now() + 2000);
  while (Date.now() < end) {
    const access = newLines(side.station.prefix, before).filter((l) =>
      !/^\S+: \d{4}\/\d\d\/\d\d /.test(l)
    );
    if (access.length >= outcomes.length) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const logs = newLines(side.station.prefix, before)
    .filter((l) => !READINESS_LINE.test(l))
    .map((l) => maskLogLine(l.replace(/^(\S+): /, ""), side.names));
  return { outcomes, logs };
}
