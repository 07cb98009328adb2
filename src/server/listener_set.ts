/**
 * The gateway's listening sockets, kept alive. `Deno.serve` ends its accept
 * loop for good on the first failed accept (out of descriptors, say): its
 * `finished` rejects and the port stops listening while the process lives on
 * (ext/http/00_serve.ts `serveHttpOn`). So each server's `finished` is
 * watched; when it settles unasked the fault policy logs it and decides, and
 * the server is bound again after a pause, as nginx re-enables accept after
 * `accept_mutex_delay` (500 ms) following EMFILE (`ngx_event_accept()`).
 * The pause doubles with each failure of a spell, up to 10 s, for as long as
 * it takes; a spell ends once a listener has served 5 s.
 *
 * The stopped server is not shut down: its connections are still served
 * (only its accept loop ended), so a browser's kept connections survive a
 * refilled descriptor table. It is shut down with the gateway, or when
 * {@linkcode MAX_STOPPED_SERVERS} newer ones replace it.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import type { FaultPolicy } from "./fault_policy.ts";
import { osErrorOf } from "../runtime/mod.ts";

/** How to serve each socket. */
export interface ListenerSetOptions {
  /** The addresses to bind, in order; an IPv6 loopback after others is optional. */
  hostnames: string[];
  /** The port; 0 picks one on the first address and reuses it for the rest. */
  port: number;
  /** The certificate and key in PEM for a TLS socket; plain HTTP without. */
  tls?: { cert: string; key: string };
  /** The request handler. */
  handler: Deno.ServeHandler<Deno.NetAddr>;
  /** `Deno.serve`'s `onError`. */
  onError: (error: unknown) => Response;
  /** Where notices go. */
  logger: Logger;
  /** Decides about a listener that stops. */
  policy: FaultPolicy;
  /** The pause before binding again. @default {500} */
  retryMs?: number;
  /** A listener serving this long counts as recovered. @default {5000} */
  stableMs?: number;
  /** The longest pause between re-listens. @default {10000} */
  maxRetryMs?: number;
}

/**
 * Stopped servers kept for their open connections. Each costs only its
 * connections; past this many the oldest is shut down, so a listener that
 * fails for months cannot pile them up.
 */
export const MAX_STOPPED_SERVERS = 16;

/** Why the first bind failed. */
export interface BindFailure {
  /** `host:port` as nginx prints it. */
  address: string;
  /** What `Deno.serve` threw. */
  error: unknown;
}

/** Formats a host for `host:port` (IPv6 in brackets). */
export function displayHost(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** One bound address and its current server. */
interface Slot {
  hostname: string;
  server: Deno.HttpServer<Deno.NetAddr>;
  /** When the current run of failures began; null while healthy. */
  troubleSince: number | null;
  /** Failures in the current run (0 while healthy). */
  failures: number;
  stableTimer: ReturnType<typeof setTimeout> | undefined;
}

/** Listening sockets that are re-created when their accept loop dies. */
export class ListenerSet {
  #options: ListenerSetOptions;
  #slots: Slot[] = [];
  #port: number;
  #stopping = false;
  #timers = new Set<ReturnType<typeof setTimeout>>();
  /** Dead servers still finishing their requests in flight. */
  #retired = new Set<Promise<void>>();
  /** Servers whose accept loop ended, still serving their connections. */
  #dead: Deno.HttpServer<Deno.NetAddr>[] = [];

  private constructor(options: ListenerSetOptions) {
    this.#options = options;
    this.#port = options.port;
  }

  /**
   * Binds every address.
   *
   * @param options What to serve and how.
   * @returns The set, or the address that could not be bound (nothing is
   * left listening then).
   */
  static async open(
    options: ListenerSetOptions,
  ): Promise<{ set: ListenerSet } | { failure: BindFailure }> {
    const set = new ListenerSet(options);
    for (const hostname of options.hostnames) {
      try {
        set.#slots.push({
          hostname,
          server: set.#serve(hostname),
          troubleSince: null,
          failures: 0,
          stableTimer: undefined,
        });
      } catch (error) {
        const address = `${displayHost(hostname)}:${set.#port}`;
        const optionalV6 = hostname === "::1" && set.#slots.length > 0 &&
          !(error instanceof Deno.errors.AddrInUse);
        if (optionalV6) {
          // No IPv6 loopback on this machine: 127.0.0.1 alone serves localhost.
          const os = osErrorOf(error);
          options.logger.error({
            level: "notice",
            message: `bind() to ${address} failed, listening on IPv4 only`,
            ...(os ? { osError: os } : {}),
          });
          continue;
        }
        await set.shutdown();
        return { failure: { address, error } };
      }
    }
    for (const slot of set.#slots) set.#watch(slot);
    return { set };
  }

  /** The port every address listens on. */
  get port(): number {
    return this.#port;
  }

  /** The bound hostnames. */
  get hostnames(): string[] {
    return this.#slots.map((s) => s.hostname);
  }

  /** `https` for a TLS socket, else `http`. */
  get scheme(): "http" | "https" {
    return this.#options.tls === undefined ? "http" : "https";
  }

  /** Stops accepting and waits for in-flight requests (no time limit). */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const slot of this.#slots) clearTimeout(slot.stableTimer);
    await Promise.all([
      ...this.#slots.map((s) => stopServer(s.server)),
      ...this.#dead.splice(0).map(stopServer),
      ...this.#retired,
    ]);
  }

  #serve(hostname: string): Deno.HttpServer<Deno.NetAddr> {
    // With a certificate, Deno.serve listens with TLS and offers h2 and
    // http/1.1 by ALPN itself (ext/http/00_serve.ts refuses alpnProtocols).
    const server = Deno.serve({
      hostname,
      port: this.#port,
      ...this.#options.tls,
      onListen() {},
      onError: this.#options.onError,
    }, this.#options.handler);
    this.#port = server.addr.port;
    return server;
  }

  #watch(slot: Slot): void {
    const server = slot.server;
    server.finished.then(
      () => this.#stopped(slot, server, undefined),
      (error) => this.#stopped(slot, server, error ?? new Error("unknown")),
    );
  }

  async #stopped(
    slot: Slot,
    server: Deno.HttpServer<Deno.NetAddr>,
    error: unknown,
  ): Promise<void> {
    if (this.#stopping || slot.server !== server) return;
    clearTimeout(slot.stableTimer);
    const now = Date.now();
    slot.troubleSince ??= now;
    const address = `${displayHost(slot.hostname)}:${this.#port}`;
    const decision = this.#options.policy.report({
      kind: "listener-stopped",
      address,
      ...(error === undefined ? {} : { error }),
      troubleMs: now - slot.troubleSince,
      failures: ++slot.failures,
    });
    this.#keepServing(server);
    if (decision === "exit") return;
    while (!this.#stopping) {
      await this.#sleep(this.#pause(slot));
      if (this.#stopping) return;
      try {
        slot.server = this.#serve(slot.hostname);
      } catch (bindError) {
        const verdict = this.#options.policy.report({
          kind: "rebind-failed",
          address,
          error: bindError,
          troubleMs: Date.now() - slot.troubleSince,
          failures: ++slot.failures,
        });
        if (verdict === "exit") return;
        continue;
      }
      // Said as often as the failures are (1st, 2nd, 4th …), and once
      // when the spell ends, so the log stays bounded.
      const failures = slot.failures;
      if ((failures & (failures - 1)) === 0) {
        this.#options.logger.error({
          level: "notice",
          message: `listening on ${address} again`,
        });
      }
      slot.stableTimer = setTimeout(() => {
        if (slot.failures > 1) {
          this.#options.logger.error({
            level: "notice",
            message: `listening on ${address} again for ${
              Math.round((this.#options.stableMs ?? 5000) / 1000)
            } s, after ${slot.failures} failures`,
          });
        }
        slot.troubleSince = null;
        slot.failures = 0;
      }, this.#options.stableMs ?? 5000);
      this.#watch(slot);
      return;
    }
  }

  /** The pause before the next bind (see {@linkcode retryPause}). */
  #pause(slot: Slot): number {
    return retryPause(slot.failures, {
      baseMs: this.#options.retryMs ?? 500,
      capMs: this.#options.maxRetryMs ?? 10_000,
    });
  }

  /**
   * Keeps a stopped server for its connections: its accept loop is gone
   * but the requests on its open connections are still served. Past
   * {@linkcode MAX_STOPPED_SERVERS} the oldest is shut down (it closes its
   * idle connections and finishes the requests in flight).
   */
  #keepServing(server: Deno.HttpServer<Deno.NetAddr>): void {
    this.#dead.push(server);
    while (this.#dead.length > MAX_STOPPED_SERVERS) {
      const retired = stopServer(this.#dead.shift()!).finally(() =>
        this.#retired.delete(retired)
      );
      this.#retired.add(retired);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

/** Shuts a server down, ignoring a loop that already died. */
async function stopServer(server: Deno.HttpServer<Deno.NetAddr>) {
  try {
    await server.shutdown();
  } catch {
    // Its accept loop failed already: there is nothing left to stop.
  }
}

/**
 * The pause before a listener that failed `failures` times in a row binds
 * again: `baseMs` after the first failure (nginx retries accept after its
 * `accept_mutex_delay`, 500 ms by default), doubling per failure, capped.
 *
 * @param failures Failures in a row, at least 1.
 * @param bounds The first pause and the longest.
 * @returns Milliseconds.
 *
 * @example Usage
 * ```ts
 * import { retryPause } from "./listener_set.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(
 *   [1, 2, 3, 6, 99].map((n) => retryPause(n, { baseMs: 500, capMs: 10_000 })),
 *   [500, 1000, 2000, 10_000, 10_000],
 * );
 * ```
 */
export function retryPause(
  failures: number,
  bounds: { baseMs: number; capMs: number },
): number {
  return Math.min(
    bounds.capMs,
    bounds.baseMs * 2 ** Math.min(Math.max(failures, 1) - 1, 20),
  );
}
