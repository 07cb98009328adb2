/**
 * The opt-in status endpoint, like nginx's `stub_status`: counters as JSON
 * on a configured path, answered only to loopback clients.
 *
 * `Deno.serve` exposes no connection table, so "connections" is the number
 * of client connections seen in the last 75 s (nginx's keep-alive timeout),
 * and requests in flight stand in for nginx's reading/writing counts.
 *
 * @module
 */

import type { UpstreamFailureKind } from "./upstream/mod.ts";
import type { UpstreamGroup } from "./upstream/mod.ts";
import { isAvailable, ngxTime } from "./upstream/mod.ts";
import { errorResponse, makeResponse } from "./response/mod.ts";

/** Counters the gateway keeps. */
export class GatewayStats {
  /** When counting began. */
  readonly started = Date.now();
  /** Requests handled (finished or not). */
  requests = 0;
  /** Requests not answered yet. */
  inFlight = 0;
  /** Answers by status class. */
  readonly byStatus: Record<"1xx" | "2xx" | "3xx" | "4xx" | "5xx", number> = {
    "1xx": 0,
    "2xx": 0,
    "3xx": 0,
    "4xx": 0,
    "5xx": 0,
  };
  /** Failed upstream attempts by kind. */
  readonly upstreamFailures: Partial<
    Record<UpstreamFailureKind | "no-live", number>
  > = {};

  /**
   * Counts an answer.
   *
   * @param status The status sent.
   */
  answered(status: number): void {
    // Compared, not formatted into a key: this runs for every request.
    const c = this.byStatus;
    if (status < 100 || status >= 600) return;
    if (status < 200) c["1xx"]++;
    else if (status < 300) c["2xx"]++;
    else if (status < 400) c["3xx"]++;
    else if (status < 500) c["4xx"]++;
    else c["5xx"]++;
  }

  /**
   * Counts a failed upstream attempt.
   *
   * @param kind What went wrong.
   */
  failed(kind: UpstreamFailureKind | "no-live"): void {
    this.upstreamFailures[kind] = (this.upstreamFailures[kind] ?? 0) + 1;
  }
}

/**
 * Whether an address is on this machine (127.0.0.0/8, ::1, or IPv4-mapped
 * loopback).
 *
 * @param address A client address.
 * @returns Whether it is loopback.
 *
 * @example Usage
 * ```ts
 * import { isLoopback } from "./status.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isLoopback("127.0.0.1"), true);
 * strictEqual(isLoopback("::ffff:127.0.0.2"), true);
 * strictEqual(isLoopback("10.0.0.5"), false);
 * ```
 */
export function isLoopback(address: string): boolean {
  return address === "::1" || /^(::ffff:)?127\./i.test(address);
}

/** What the status document is built from. */
export interface StatusSources {
  /** The gateway's version. */
  version: string;
  /** The counters. */
  stats: GatewayStats;
  /** The upstream servers. */
  group?: UpstreamGroup;
  /** Client connections seen recently. */
  connections: number;
  /** Memory the static cache is charged with (`StaticCache.totalBytes`). */
  staticCacheBytes: number;
  /** The process's memory, as `Deno.memoryUsage()` reports it. */
  memory: Deno.MemoryUsage;
}

/**
 * The status document.
 *
 * @param sources Where the numbers come from.
 * @param now The clock, for tests.
 * @returns A JSON-ready object.
 */
export function statusDocument(
  sources: StatusSources,
  now = Date.now(),
): Record<string, unknown> {
  const { stats } = sources;
  return {
    version: sources.version,
    uptimeSeconds: Math.floor((now - stats.started) / 1000),
    connections: sources.connections,
    requests: {
      total: stats.requests,
      inFlight: stats.inFlight,
      byStatus: { ...stats.byStatus },
    },
    upstream: {
      group: sources.group?.name ?? null,
      failures: { ...stats.upstreamFailures },
      servers: (sources.group?.peers ?? []).map((p) => ({
        server: p.spec.address.peer,
        backup: p.spec.backup,
        // Whether the round-robin may choose it now (not skipped for
        // fail_timeout after max_fails failures).
        available: isAvailable(p.rr, ngxTime(now)),
        fails: p.rr.fails,
        idleConnections: p.client.idleCount,
      })),
    },
    staticCacheBytes: sources.staticCacheBytes,
    // For watching a process that runs for months: RSS, and the JS heap and
    // the memory outside it (buffers) that V8 accounts for.
    memory: {
      rssBytes: sources.memory.rss,
      heapUsedBytes: sources.memory.heapUsed,
      heapTotalBytes: sources.memory.heapTotal,
      externalBytes: sources.memory.external,
    },
  };
}

/** The figures of nginx's `stub_status` page. */
export interface StubStatusCounts {
  /** Open client connections. */
  active: number;
  /** Client connections accepted. */
  accepted: number;
  /** Client connections handled (every accepted one: no limit refuses). */
  handled: number;
  /** Client requests. */
  requests: number;
  /** Connections reading a request head. */
  reading: number;
  /** Connections with a request being answered. */
  writing: number;
  /** Idle keep-alive connections. */
  waiting: number;
}

/**
 * nginx's `stub_status` page (ngx_http_stub_status_handler), spaces and
 * line ends as nginx writes them.
 *
 * @param c The figures.
 * @returns The page.
 *
 * @example Usage
 * ```ts
 * import { stubStatusText } from "./status.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const page = stubStatusText({
 *   active: 1, accepted: 5, handled: 5, requests: 9,
 *   reading: 0, writing: 1, waiting: 0,
 * });
 * strictEqual(page.split("\n")[2], " 5 5 9 ");
 * ```
 */
export function stubStatusText(c: StubStatusCounts): string {
  return `Active connections: ${c.active} \n` +
    "server accepts handled requests\n" +
    ` ${c.accepted} ${c.handled} ${c.requests} \n` +
    `Reading: ${c.reading} Writing: ${c.writing} Waiting: ${c.waiting} \n`;
}

/**
 * The `stub_status` answer from the gateway's counters. `Deno.serve`
 * shows no connection table: the connections with a request being
 * answered are the active ones (all writing), idle keep-alive ones are not
 * seen (waiting 0), and accepts count the client connections that sent a
 * request (README, stub-status).
 *
 * @param req The request: GET and HEAD only, else 405 as nginx.
 * @param stats The request counters.
 * @param connections Client connections seen since start.
 * @returns The page, `text/plain`, or nginx's 405 page.
 */
export function stubStatusResponse(
  req: Request,
  stats: GatewayStats,
  connections: number,
): Response {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return errorResponse(405, {});
  }
  const bytes = new TextEncoder().encode(stubStatusText({
    active: stats.inFlight,
    accepted: connections,
    handled: connections,
    requests: stats.requests,
    reading: 0,
    writing: stats.inFlight,
    waiting: 0,
  }));
  return makeResponse(req.method === "HEAD" ? null : bytes, {
    headers: {
      "content-type": "text/plain",
      "content-length": String(bytes.length),
    },
  });
}
