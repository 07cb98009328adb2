/**
 * One corpus file side by side: `nginx -t` and the gateway's `--check`,
 * then, when both accept it, nginx 1.22 and the gateway each run from their
 * own copy of the file (own ports, own recording upstreams, own folder) on
 * the same probes, compared on status, client-visible fields, what each
 * upstream received and the log lines written meanwhile.
 *
 * @module
 */

import { freePort } from "../../_utils.ts";
import type { Probe } from "./client.ts";
import { difference, firstLine, maskText, type Outcome } from "./compare.ts";
import { firstServers, probesFor } from "./probes.ts";
import {
  gatewayCheck,
  nginxCheck,
  startGateway,
  startNginx,
} from "./processes.ts";
import { probeSide, type Side } from "./run_side.ts";
import { buildStation, caseText, placeholderCount } from "./station.ts";
import { takeAhead } from "./station_ahead.ts";
import { newRunTag } from "./run_tag.ts";
import { type Received, startRecordingUpstream } from "./upstream.ts";
import {
  fastcgiPlaceholders,
  startRecordingFastcgi,
} from "./fastcgi_upstream.ts";

/** One file's row of the report. */
export interface FileResult {
  name: string;
  nginx: { ok: boolean; message: string };
  gateway: { ok: boolean; message: string };
  verdictsAgree: boolean;
  /** Both ran and answered on every listen port. */
  runs: boolean;
  /** Ran, and no difference was found. */
  behaves: boolean;
  /** The first difference, or why it did not run. */
  first: string;
  /** How many probes differed (and log differences, as one). */
  differences: number;
  /** Every difference, in probe order. */
  all: string[];
  /** What nginx answered to each probe, e.g. `GET / [navigation]: 200`. */
  nginxAnswers: string[];
  probes: number;
  /** A crash or stack trace the gateway printed. */
  gatewayTrace?: string;
}

/** Bounds for one file. */
export interface CompareOptions {
  /** Per request. @default {3000} */
  requestTimeoutMs?: number;
  /** For the whole file; probes past it are not sent. @default {60000} */
  deadlineMs?: number;
  /**
   * What runs beside nginx: the gateway, or nginx again (a check of the
   * harness itself: it must find no difference). @default {"gateway"}
   */
  against?: "gateway" | "nginx";
  /** Compare the named differences too (see `MASKED`). @default {false} */
  strict?: boolean;
}

const TRACE = /^\s+at .+:\d+:\d+\)?$|Uncaught|panicked/m;

/** One probe and what nginx did with it, e.g. `GET /: 200`. */
function answerLine(probe: Probe, x: Outcome): string {
  const ws = probe.websocket;
  const up = x.upstream.map((u) => u.split("\n")[0]).join(", ");
  return `${probe.host ? `${probe.host} ` : ""}${probe.method} ${probe.target}${
    ws ? " (WebSocket)" : ""
  }: ${x.status}` +
    (up ? ` → ${up}` : "") + (ws ? ` echo ${JSON.stringify(x.body)}` : "");
}

/** How many times a file is run again on new ports after a port was taken. */
const PORT_ATTEMPTS = 5;

/**
 * Compares nginx and the gateway on one corpus file. Its listen ports are
 * written into the files before either process binds them, and suites
 * running beside this one draw from the same range in between: a run that
 * found a port taken is done again, whole, on newly drawn ports.
 *
 * @param caseDir The case folder (its `nginx.conf` is the file).
 * @param options Time bounds.
 * @returns The file's row.
 */
export async function compareFile(
  caseDir: string,
  options: CompareOptions = {},
): Promise<FileResult> {
  for (let attempt = 1;; attempt++) {
    const row = await compareFileOnce(caseDir, options);
    const taken = /Address already in use/.test(JSON.stringify(row));
    if (!taken || attempt >= PORT_ATTEMPTS) return row;
  }
}

async function compareFileOnce(
  caseDir: string,
  options: CompareOptions,
): Promise<FileResult> {
  const o: Required<CompareOptions> = {
    requestTimeoutMs: 3000,
    deadlineMs: 60_000,
    against: "gateway",
    strict: false,
    ...options,
  };
  const deadline = Date.now() + o.deadlineMs;
  const name = caseDir.split("/").filter(Boolean).at(-1)!;
  const text = caseText(caseDir);
  const listenCount = Math.max(
    1,
    placeholderCount(text, "LISTEN"),
    placeholderCount(text, "PORT"),
  );
  const upstreamCount = placeholderCount(text, "UPSTREAM");
  // A placeholder `fastcgi_pass` names gets a FastCGI responder.
  const fastcgi = fastcgiPlaceholders(text);
  const sides: Side[] = [];
  const stack = new AsyncDisposableStack();
  try {
    for (let i = 0; i < 2; i++) {
      const seen: Received[] = [];
      const upstreams = Array.from(
        { length: upstreamCount },
        (_, k) =>
          stack.use(
            fastcgi.has(k + 1)
              ? startRecordingFastcgi(k + 1, seen)
              : startRecordingUpstream(k + 1, seen),
          ),
      );
      const listen = Array.from({ length: listenCount }, freePort);
      const values = { listen, upstream: upstreams.map((u) => u.port) };
      const nginx = i === 0 || o.against === "nginx";
      const station = stack.use(
        buildStation(caseDir, values, {
          nginx,
          // nginx serves a file at once; the gateway waits for its folders
          // to settle.
          base: nginx ? undefined : takeAhead(caseDir),
        }),
      );
      sides.push({
        station,
        seen,
        tag: newRunTag(),
        names: { prefix: station.prefix, ...values },
      });
    }
    const [n, g] = sides as [Side, Side];
    const [nv, gv] = await Promise.all([
      nginxCheck(n.station),
      o.against === "nginx" ? nginxCheck(g.station) : gatewayCheck(g.station),
    ]);
    nv.message = maskText(nv.message, n.names);
    gv.message = maskText(gv.message, g.names);
    const trace = gv.output.match(TRACE)
      ? gv.output.trim().split("\n").slice(0, 6).join(" | ")
      : undefined;
    const row: FileResult = {
      name,
      nginx: { ok: nv.ok, message: nv.message },
      gateway: { ok: gv.ok, message: gv.message },
      verdictsAgree: nv.ok === gv.ok,
      runs: false,
      behaves: false,
      first: "",
      differences: 0,
      all: [],
      nginxAnswers: [],
      probes: 0,
      ...(trace ? { gatewayTrace: trace } : {}),
    };
    if (!nv.ok || !gv.ok) {
      row.first = !nv.ok && !gv.ok
        ? "both refuse"
        : !nv.ok
        ? `nginx refuses: ${nv.message}`
        : `gateway refuses: ${gv.message}`;
      return row;
    }
    // The check's upstream probe is not part of the comparison.
    n.seen.length = 0;
    g.seen.length = 0;
    const probes = probesFor(firstServers(n.station.tree, n.names.listen[0]!));
    row.probes = probes.length;
    const results = [];
    for (const side of sides) {
      await using server = side === n || o.against === "nginx"
        ? await startNginx(side.station, side.names.listen)
        : await startGateway(side.station);
      if (!server.ready) {
        // A port taken is said in an earlier line than the last
        // (`still could not bind()`); `compareFile` runs again on it.
        const taken = server.output().match(/.*Address already in use.*/)?.[0];
        row.first = taken !== undefined
          ? `port taken: ${taken}`
          : `${side === n ? "nginx" : "gateway"} did not start: ${
            server.output().trim().split("\n").at(-1) ?? ""
          }`;
        const out = server.output();
        if (side === g && TRACE.test(out)) {
          row.gatewayTrace = out.trim().split("\n").slice(0, 6).join(" | ");
        }
        return row;
      }
      results.push(await probeSide(side, server, probes, o, deadline));
      // Another process held the port, and answered the probes for it.
      const taken = server.output().match(/.*Address already in use.*/)?.[0];
      if (taken !== undefined) {
        row.first = `port taken: ${taken}`;
        return row;
      }
    }
    row.runs = true;
    const [nr, gr] = results as [typeof results[0], typeof results[0]];
    const firsts: string[] = [];
    const all = [...probes, ...n.names.listen.slice(1).map(() => probes[0]!)];
    for (let i = 0; i < Math.max(nr.outcomes.length, gr.outcomes.length); i++) {
      const a = nr.outcomes[i];
      const b = gr.outcomes[i];
      if (!a || !b) {
        firsts.push(`${all[i]?.target}: not sent (deadline)`);
        continue;
      }
      const d = difference(all[i]!, a, b);
      if (d) firsts.push(d);
    }
    const nl = nr.logs.join("\n");
    const gl = gr.logs.join("\n");
    if (nl !== gl) firsts.push(`log lines: ${firstLine(nl, gl)}`);
    row.nginxAnswers = nr.outcomes.map((x, i) => answerLine(all[i]!, x));
    row.differences = firsts.length;
    row.all = firsts;
    row.behaves = firsts.length === 0 && nr.outcomes.length === all.length;
    row.first = firsts[0] ?? (row.behaves ? "" : "deadline reached");
    return row;
  } finally {
    await stack.disposeAsync();
  }
}
