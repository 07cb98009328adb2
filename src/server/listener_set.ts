/**
 * The gateway's listening sockets, kept alive. `Deno.serve` ends its accept
 * loop for good on the first failed accept (out of descriptors, say): its
 * `finished` rejects and the port stops listening while the process lives on
 * (ext/http/00_serve.ts `serveHttpOn`). So each server's `finished` is
 * watched; when it settles unasked the fault policy logs it and decides, and
 * the server is bound again after a pause, as nginx re-enables accept after
 * `accept_mutex_delay` (500 ms) following EMFILE (`ngx_event_accept()`).
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
}

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

  /** Stops accepting and waits for in-flight requests (no time limit). */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const slot of this.#slots) clearTimeout(slot.stableTimer);
    await Promise.all([
      ...this.#slots.map((s) => stopServer(s.server)),
      ...this.#retired,
    ]);
  }

  #serve(hostname: string): Deno.HttpServer<Deno.NetAddr> {
    const server = Deno.serve({
      hostname,
      port: this.#port,
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
    });
    // Not awaited: a graceful shutdown waits for the dead loop's requests in
    // flight, and its listening socket is already closed.
    const retired = stopServer(server).finally(() =>
      this.#retired.delete(retired)
    );
    this.#retired.add(retired);
    if (decision === "exit") return;
    while (!this.#stopping) {
      await this.#sleep(this.#options.retryMs ?? 500);
      if (this.#stopping) return;
      try {
        slot.server = this.#serve(slot.hostname);
      } catch (bindError) {
        const verdict = this.#options.policy.report({
          kind: "rebind-failed",
          address,
          error: bindError,
          troubleMs: Date.now() - slot.troubleSince,
        });
        if (verdict === "exit") return;
        continue;
      }
      this.#options.logger.error({
        level: "notice",
        message: `listening on ${address} again`,
      });
      slot.stableTimer = setTimeout(() => {
        slot.troubleSince = null;
      }, this.#options.stableMs ?? 5000);
      this.#watch(slot);
      return;
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
