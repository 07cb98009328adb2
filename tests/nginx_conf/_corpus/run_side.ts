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
import { ownRequests, tagged } from "./run_tag.ts";

/**
 * The log files of a station, by path from its prefix: `logs/`, and the
 * prefix itself, where a relative `access_log x.log` writes
 * (`ngx_conf_full_name` resolves it from the prefix).
 */
function logFiles(prefix: string): string[] {
  const files: string[] = [];
  for (const dir of ["", "logs"]) {
    for (const e of Deno.readDirSync(join(prefix, dir))) {
      if (e.isFile && e.name.endsWith(".log")) files.push(join(dir, e.name));
    }
  }
  return files.sort();
}

function logState(prefix: string): Map<string, number> {
  return new Map(
    logFiles(prefix).map((f) => [f, Deno.statSync(join(prefix, f)).size]),
  );
}

/** Log lines appended since `before`, file by file. */
function newLines(prefix: string, before: Map<string, number>): string[] {
  const out: string[] = [];
  for (const file of logFiles(prefix)) {
    const bytes = Deno.readFileSync(join(prefix, file));
    const text = new TextDecoder().decode(
      bytes.subarray(before.get(file) ?? 0),
    );
    out.push(
      ...text.split("\n").filter((l) => l !== "").map((l) => `${file}: ${l}`),
    );
  }
  return out;
}

/** Whether a line of {@linkcode newLines} is an access line. */
function isAccessLine(line: string): boolean {
  return !/^\S+: \d{4}\/\d\d\/\d\d /.test(line);
}

/**
 * The query of the request sent after the probes (not a probe): its lines
 * prove the probes' lines are written, and are not compared.
 */
const MARKER = "corpus-harness-marker";

/** The request whose line ends the wait for the probes' lines. */
const MARKER_PROBE: Probe = {
  label: "the harness's marker",
  method: "GET",
  target: `/?${MARKER}`,
};

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
  /** What the side's requests carry (`run_tag.ts`): a `newRunTag()`. */
  tag: string;
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
      tagged(probe, side.tag),
      "localhost",
      options.requestTimeoutMs,
      trust(port),
    );
    outcomes.push(
      outcome(
        seen,
        ownRequests(side.seen.slice(start), side.tag),
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
      tagged(probes[0]!, side.tag),
      "localhost",
      options.requestTimeoutMs,
      trust(other),
    );
    outcomes.push(
      outcome(
        seen,
        ownRequests(side.seen.slice(start), side.tag),
        side.names,
        options.strict,
        tls.ports.has(other),
      ),
    );
  }
  // The access log is written after the response (nginx's log phase,
  // ngx_http_free_request; the gateway's when the exchange completes or the
  // tunnel closes): wait for a line per request, or else for the line of
  // one more request. Each side serves its requests in one event loop in
  // the order sent (the probes' lines are compared in that order), so the
  // marker's line comes after every probe's, and a probe whose location
  // logs nothing (`access_log off`) is not waited for. The bound is for a
  // file whose `/` logs nothing either, or logs no `$request`.
  const accessLines = () =>
    newLines(side.station.prefix, before).filter(isAccessLine);
  if (
    accessLines().length < outcomes.length && Date.now() <= deadline &&
    server.ready
  ) {
    await send(
      port,
      tagged(MARKER_PROBE, side.tag),
      "localhost",
      options.requestTimeoutMs,
      trust(port),
    );
    const end = Math.min(deadline, Date.now() + 2000);
    while (Date.now() < end) {
      const lines = accessLines();
      const marked = lines.filter((l) => l.includes(MARKER)).length;
      if (marked > 0 || lines.length >= outcomes.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const logs = newLines(side.station.prefix, before)
    .filter((l) => !READINESS_LINE.test(l) && !l.includes(MARKER))
    .map((l) => maskLogLine(l.replace(/^(\S+): /, ""), side.names));
  return { outcomes, logs };
}
