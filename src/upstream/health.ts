/**
 * Whether the upstream answers, for the built-in page: a real HTTP request
 * (so a server that accepts connections but never answers is not reported
 * healthy), probed at most once a second however many pages ask, and the
 * time the answer last changed.
 *
 * @module
 */

import { osErrorOf } from "../runtime/mod.ts";

/** One probe's outcome. */
export type ProbeResult =
  | { ok: true; detail: string }
  | { ok: false; reason: string };

/** What the page shows about the upstream. */
export interface HealthReport {
  /** Whether the last probe got an HTTP answer. */
  answers: boolean;
  /** The answer (`HTTP 200`), or why there was none. */
  detail: string;
  /** When `answers` last changed (ms since the epoch). */
  since: number;
  /** When the last probe ended (ms since the epoch). */
  checkedAt: number;
}

/** Options for {@linkcode UpstreamHealth}. */
export interface UpstreamHealthOptions {
  /** One probe; returns its failure as data. */
  probe: () => Promise<ProbeResult>;
  /** A result younger than this is reused. @default {1000} */
  minIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * The upstream's state, probed on demand and shared: concurrent callers get
 * the probe in flight, and a result younger than `minIntervalMs` is reused,
 * so a page reloaded by many browsers costs at most one probe a second.
 */
export class UpstreamHealth {
  #probe: () => Promise<ProbeResult>;
  #minIntervalMs: number;
  #now: () => number;
  #last: HealthReport | null = null;
  #inFlight: Promise<HealthReport> | null = null;

  /**
   * Creates the tracker; nothing is probed until {@linkcode check}.
   *
   * @param options The probe, its minimum interval and the clock.
   */
  constructor(options: UpstreamHealthOptions) {
    this.#probe = options.probe;
    this.#minIntervalMs = options.minIntervalMs ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The upstream's state: the probe in flight, a fresh enough result, or a
   * new probe.
   *
   * @returns The report.
   */
  check(): Promise<HealthReport> {
    if (this.#inFlight !== null) return this.#inFlight;
    const last = this.#last;
    if (last !== null && this.#now() - last.checkedAt < this.#minIntervalMs) {
      return Promise.resolve(last);
    }
    const run = this.#run();
    this.#inFlight = run;
    return run;
  }

  async #run(): Promise<HealthReport> {
    let result: ProbeResult;
    try {
      result = await this.#probe();
    } catch (error) {
      result = { ok: false, reason: String(error) };
    }
    const now = this.#now();
    const last = this.#last;
    const report: HealthReport = {
      answers: result.ok,
      detail: result.ok ? result.detail : result.reason,
      since: last !== null && last.answers === result.ok ? last.since : now,
      checkedAt: now,
    };
    this.#last = report;
    this.#inFlight = null;
    return report;
  }
}

/** Where and how long {@linkcode probeHttp} asks. */
export interface HttpProbeOptions {
  /** The upstream host. */
  hostname: string;
  /** The upstream port. */
  port: number;
  /** The `Host` header sent (the gateway sends the server's host:port). */
  host: string;
  /** Give up on the whole exchange after this long. */
  timeoutMs: number;
}

const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})/;

/**
 * Sends `GET /` and waits for the status line: any status counts as an
 * answer, since it proves the application is serving HTTP; a connection
 * accepted without one does not.
 *
 * @param options Where to ask, and for how long.
 * @returns `HTTP <status>`, or the reason there was no answer.
 */
export async function probeHttp(
  options: HttpProbeOptions,
): Promise<ProbeResult> {
  const { timeoutMs } = options;
  const timer = new AbortController();
  let conn: Deno.TcpConn | null = null;
  const id = setTimeout(() => {
    timer.abort();
    try {
      conn?.close();
    } catch { /* closed below */ }
  }, timeoutMs);
  try {
    conn = await Deno.connect({
      hostname: options.hostname,
      port: options.port,
      signal: timer.signal,
    });
  } catch (error) {
    clearTimeout(id);
    return {
      ok: false,
      reason: timer.signal.aborted
        ? `no connection within ${timeoutMs} ms`
        : osReason("connect()", error),
    };
  }
  try {
    const request = `GET / HTTP/1.1\r\nHost: ${options.host}\r\n` +
      `User-Agent: station-gateway-probe\r\nConnection: close\r\n\r\n`;
    const bytes = new TextEncoder().encode(request);
    for (let n = 0; n < bytes.length;) {
      n += await conn.write(bytes.subarray(n));
    }
    const head = await readLine(conn, 1024);
    const status = head.match(STATUS_LINE)?.[1];
    return status === undefined
      ? {
        ok: false,
        reason: head === ""
          ? "closed the connection without an HTTP answer"
          : "answered something that is not HTTP",
      }
      : { ok: true, detail: `HTTP ${status}` };
  } catch (error) {
    return {
      ok: false,
      reason: timer.signal.aborted
        ? `accepted the connection but sent no HTTP answer within ${timeoutMs} ms`
        : osReason("recv()", error),
    };
  } finally {
    clearTimeout(id);
    try {
      conn.close();
    } catch { /* the timer closed it */ }
  }
}

/** Reads up to the first CRLF, at most `limit` bytes; "" at once on EOF. */
async function readLine(conn: Deno.Conn, limit: number): Promise<string> {
  const buf = new Uint8Array(limit);
  let used = 0;
  while (used < limit) {
    const n = await conn.read(buf.subarray(used));
    if (n === null) break;
    used += n;
    if (buf.subarray(0, used).includes(10)) break;
  }
  return new TextDecoder().decode(buf.subarray(0, used)).split("\r\n")[0]!;
}

function osReason(call: string, error: unknown): string {
  const os = osErrorOf(error);
  if (os !== undefined) return `${call} failed (${os.code}: ${os.text})`;
  return error instanceof Error ? error.message : String(error);
}
