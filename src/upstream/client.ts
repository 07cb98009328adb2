/**
 * The upstream leg: HTTP/1.1 over `Deno.connect`, with a keep-alive pool,
 * nginx's three timers and phase-exact failures.
 *
 * Why not `fetch`: it cannot tell a FIN from an RST, a slow connect from a
 * slow response, or sending from reading (all are "fetch failed"), has no
 * timeouts (denoland/deno#28115), and decodes gzip/br behind the proxy's
 * back (denoland/deno#35124), so nginx's failure classes, timers and
 * byte-exact passthrough cannot be built on it.
 *
 * Timers follow nginx: connect is one deadline (`proxy_connect_timeout`);
 * send and read are between two successive operations, not totals
 * (`proxy_send_timeout`, `proxy_read_timeout`).
 *
 * Pooled connections are watched while idle: a pending read notices the
 * upstream closing them at once, so a stale connection is rarely picked. A
 * request that still meets one (no response byte arrived) is retried once on
 * a new connection only if it is idempotent and its body was buffered.
 * Non-idempotent requests are never sent twice (RFC 9110 §9.2.2) and take
 * only a connection used too recently for the upstream's idle timeout to
 * be closing it (`pool.ts`).
 *
 * A new connection is opened by `peer_connect.ts`; what a failure before
 * the head means is decided in `exchange_failures.ts`, the reply a head
 * makes in `reply.ts`.
 *
 * @module
 */

import {
  DEFAULT_HEAD_BUFFER,
  parseResponseHead,
  type ResponseHead,
} from "./http1.ts";
import { responseFraming } from "./response_framing.ts";
import { GcPacer } from "../runtime/mod.ts";
import type { BodySource } from "./body.ts";
import { IdlePool } from "./pool.ts";
import { Watchdog } from "./watchdog.ts";
import { type ConnectionIo, readSome, writeRequest } from "./io.ts";
import { sendsLong, sendWatching } from "./early_answer.ts";
import { ClientWatch, Connection, EMPTY, NOTHING } from "./connection.ts";
import type {
  UpstreamCall,
  UpstreamClientOptions,
  UpstreamReply,
} from "./types.ts";
import { currentOsFamily, type OsFamily } from "../runtime/mod.ts";
import { UpstreamError } from "./error.ts";
import {
  asUpstreamError,
  closedEarly,
  readFailure,
  sendFailure,
} from "./exchange_failures.ts";
import { connectPeer } from "./peer_connect.ts";
import { replyWithBody } from "./reply.ts";

const IDEMPOTENT = new Set([
  "GET",
  "HEAD",
  "PUT",
  "DELETE",
  "OPTIONS",
  "TRACE",
]);

/** A keep-alive HTTP/1.1 client for one upstream peer. */
export class UpstreamClient {
  #options: UpstreamClientOptions;
  #pool: IdlePool;
  #family: OsFamily;
  /** nginx's `proxy_buffer_size`: the largest response head. */
  #headBufferSize: number;
  #watchdog = new Watchdog();
  /** The timed reads and writes (upstream/io.ts). */
  #io: ConnectionIo;
  /** What streamed bodies read through: one object per client, not per body. */
  #bodySource: BodySource;

  /**
   * Creates the client; connections are opened on demand.
   *
   * @param options The peer, timers and pool settings.
   */
  constructor(options: UpstreamClientOptions) {
    this.#options = options;
    this.#headBufferSize = options.headBufferSize ?? DEFAULT_HEAD_BUFFER;
    this.#io = { watchdog: this.#watchdog, timeouts: options.timeouts };
    this.#pool = new IdlePool({
      maxIdle: options.maxIdle ?? 32,
      idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
      ...(options.now ? { now: options.now } : {}),
    });
    this.#family = options.family ?? currentOsFamily();
    this.#bodySource = {
      read: (c) => readSome(this.#io, c, true),
      release: (c) => this.#pool.put(c),
      gcPacer: options.gcPacer ?? new GcPacer(),
      family: this.#family,
    };
  }

  /** Idle connections in the pool (for tests and status). */
  get idleCount(): number {
    return this.#pool.size;
  }

  /** Closes every pooled connection; later calls still work. */
  close(): void {
    this.#pool.close();
    this.#watchdog.stop();
  }

  /**
   * Sends a request and returns the response head and body.
   *
   * @param call The request.
   * @returns The reply.
   * @throws {UpstreamError} For every failure before the head arrived.
   */
  async send(call: UpstreamCall): Promise<UpstreamReply> {
    const watch = new ClientWatch(call.signal, Date.now());
    if (watch.pending) this.#watchdog.watch(watch);
    // One async layer for the pooled try and the fresh one: each layer is
    // a frame and promises of garbage per request.
    try {
      // A stale kept connection is retried only for an idempotent method
      // whose body can be sent again (bytes, or the file it was buffered
      // to). A non-idempotent request takes only a connection idle for
      // less than the upstream's idle timeout can be (pool.ts), and is
      // never resent: nothing proves that a request which met a close was
      // not processed (nginx retries no such request once sent either:
      // ngx_http_upstream_next, NGX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT).
      const idempotent = IDEMPOTENT.has(call.method);
      const retryable = idempotent && call.body?.kind !== "stream";
      const first = call.upgrade ? null : this.#pool.take(!idempotent);
      if (first !== null) {
        call.onConnected?.();
        try {
          return await this.#exchange(first, call, watch);
        } catch (error) {
          if (!(error instanceof UpstreamError && error.stale)) throw error;
          // The upstream closes connections idle this long: later
          // non-idempotent requests keep away from such ones.
          this.#pool.closedAfter(first.idleMs);
          if (!retryable) throw error;
          // The pooled connection was closed under us before any response
          // byte: the request was not processed, so it is safe to resend.
        }
      }
      const fresh = await connectPeer(watch, {
        peer: this.#options,
        connectMs: call.timeouts?.connectMs ?? this.#options.timeouts.connectMs,
        family: this.#family,
      });
      call.onConnected?.();
      return await this.#exchange(fresh, call, watch);
    } finally {
      this.#watchdog.unwatch(watch);
      watch.detach();
    }
  }

  // One async layer: the steps around the awaits are synchronous methods.
  async #exchange(
    c: Connection,
    call: UpstreamCall,
    watch: ClientWatch,
  ): Promise<UpstreamReply> {
    watch.onAbort = () => c.close();
    c.timeouts = call.timeouts ?? null;
    const headLimit = call.headBufferSize ?? this.#headBufferSize;
    try {
      try {
        await (sendsLong(call)
          ? sendWatching(this.#io, c, call)
          : writeRequest(this.#io, c, call));
      } catch (error) {
        throw sendFailure(c, {
          watch,
          error,
          family: this.#family,
          streamed: call.body?.kind === "stream",
        });
      }
      let buffer: Uint8Array = EMPTY;
      let got = 0;
      // A partial head's bytes already searched, and the store it grows in
      // (room doubled when full): a head arriving a few bytes per read costs
      // linear time, not a search and a copy of all of it per read.
      let searched = 0;
      let store: ArrayBuffer | null = null;
      while (true) {
        const head = buffer.length > 0
          ? parseResponseHead(buffer, headLimit, searched)
          : null;
        if (head !== null && isInterim(head)) {
          buffer = buffer.subarray(head.headLength); // 100 Continue etc.
          searched = 0;
          continue;
        }
        if (head !== null) {
          const rest = buffer.subarray(head.headLength);
          return this.#reply(c, call, watch, head, rest);
        }
        searched = buffer.length;
        // The next read reuses the scratch buffer a partial head may be in.
        if (buffer.buffer === c.scratch.buffer) buffer = buffer.slice();
        let chunk: Uint8Array | null;
        try {
          chunk = await readSome(this.#io, c);
        } catch (error) {
          throw readFailure(c, { watch, error, got, family: this.#family });
        }
        if (chunk === null) throw closedEarly(c, got);
        got += chunk.length;
        if (buffer.length === 0) buffer = chunk;
        else {
          buffer = append(buffer, chunk, store);
          store = buffer.buffer as ArrayBuffer;
        }
      }
    } catch (error) {
      watch.onAbort = NOTHING;
      c.close();
      throw asUpstreamError(error);
    }
  }

  /**
   * The reply for a head: the upgraded connection, or the body's framing.
   * Positional, not an options object: it runs for every request.
   */
  #reply(
    c: Connection,
    call: UpstreamCall,
    watch: ClientWatch,
    head: ResponseHead,
    rest: Uint8Array,
  ): UpstreamReply {
    if (head.status === 101 && call.upgrade) {
      watch.onAbort = NOTHING;
      return {
        head,
        body: null,
        length: null,
        upgraded: { conn: c.conn, rest: rest.slice() },
      };
    }
    const framing = responseFraming(head, call.method);
    const reply = replyWithBody(
      c,
      { call, watch, head, framing, rest },
      this.#bodySource,
    );
    watch.onAbort = NOTHING;
    return reply;
  }
}

/**
 * `bytes` followed by `chunk`: written after `bytes` in `store` (a store
 * this function made) when it has the room, else copied into a new store
 * twice their size.
 */
function append(
  bytes: Uint8Array,
  chunk: Uint8Array,
  store: ArrayBuffer | null,
): Uint8Array {
  const length = bytes.length + chunk.length;
  if (
    bytes.buffer === store && bytes.byteOffset + length <= store.byteLength
  ) {
    const grown = new Uint8Array(store, bytes.byteOffset, length);
    grown.set(chunk, bytes.length);
    return grown;
  }
  const grown = new Uint8Array(new ArrayBuffer(length * 2), 0, length);
  grown.set(bytes);
  grown.set(chunk, bytes.length);
  return grown;
}

/** A 1xx other than 101: an interim answer before the final one (RFC 9110 §15.2). */
function isInterim(head: ResponseHead): boolean {
  return head.status >= 100 && head.status < 200 && head.status !== 101;
}
