/**
 * The upstream leg: HTTP/1.1 over `Deno.connect`, with a keep-alive pool,
 * nginx's three timers and phase-exact failures.
 *
 * Why not `fetch`: it cannot tell a FIN from an RST, a slow connect from a
 * slow response, or sending from reading (all are "fetch failed"), has no
 * timeouts (denoland/deno#28115), decodes gzip/br behind the proxy's back
 * (denoland/deno#35124), and costs about twice the CPU per request
 * (perf-baseline.md §5; `deno task bench` measures it here).
 *
 * Timers follow nginx: connect is one deadline (`proxy_connect_timeout`);
 * send and read are between two successive operations, not totals
 * (`proxy_send_timeout`, `proxy_read_timeout`).
 *
 * Pooled connections are watched while idle: a pending read notices the
 * upstream closing them at once, so a stale connection is rarely picked. A
 * request that still meets one (no response byte arrived) is retried once on
 * a new connection only if it is idempotent and its body was buffered;
 * non-idempotent requests never take a connection that has idled long
 * enough to be at risk, and are never sent twice (RFC 9110 §9.2.2).
 *
 * @module
 */

import {
  ChunkedDecoder,
  ChunkedFormatError,
  InvalidResponseError,
  keepsAlive,
  parseResponseHead,
  type ResponseFraming,
  responseFraming,
  type ResponseHead,
  serializeRequestHead,
  writeRequestHead,
} from "./http1.ts";
import { GcPacer } from "./gc_pacer.ts";
import type { OsFamily } from "./os_errors.ts";
import { sendBody } from "./request_body.ts";
import {
  type UpstreamAction,
  UpstreamError,
  upstreamErrorFromOs,
  upstreamTimeout,
} from "./upstream_error.ts";

/** nginx's upstream timers, in milliseconds. */
export interface UpstreamTimeouts {
  /** `proxy_connect_timeout`: establishing the connection. */
  connectMs: number;
  /** `proxy_send_timeout`: between two successive writes. */
  sendMs: number;
  /** `proxy_read_timeout`: between two successive reads. */
  readMs: number;
}

/** Options for {@linkcode UpstreamClient}. */
export interface UpstreamClientOptions {
  /** Upstream host name or address. */
  hostname: string;
  /** Upstream port. */
  port: number;
  /** The timers. */
  timeouts: UpstreamTimeouts;
  /**
   * Idle connections kept per server (nginx `keepalive N`); 0 opens a new
   * connection per request, as nginx before 1.29.7 does by default.
   *
   * @default {32}
   */
  maxIdle?: number;
  /**
   * Close an idle connection after this long (nginx `keepalive_timeout`).
   *
   * @default {60_000}
   */
  idleTimeoutMs?: number;
  /** Called for every new upstream connection (nginx counts them). */
  onConnect?: () => void;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
  /** Paces collections of streamed body chunks; one may serve many clients. */
  gcPacer?: GcPacer;
}

/** One request for the upstream. */
export interface UpstreamCall {
  /** The method. */
  method: string;
  /** The path and query. */
  path: string;
  /** The `Host` header value. */
  host: string;
  /** Header fields, already filtered. */
  headers: readonly (readonly [string, string])[];
  /** The body: buffered bytes, a stream of known length, or `null`. */
  body:
    | { kind: "bytes"; bytes: Uint8Array }
    | {
      kind: "stream";
      stream: ReadableStream<Uint8Array>;
      length: number | null;
    }
    | null;
  /**
   * Aborts when the client goes away. A function is called only once the
   * exchange has been waiting for one watchdog period: `req.signal` of
   * `Deno.serve` starts a per-request cancel watch in Deno when first read,
   * which measured 3-8 % of a proxied small POST's CPU (old and new build
   * side by side on one core), while nearly every exchange ends well before
   * the client could matter.
   */
  signal: AbortSignal | (() => AbortSignal);
  /** Told about a failure after the head was returned (`while reading upstream`). */
  onBodyError: (error: UpstreamError) => void;
  /**
   * A protocol upgrade (WebSocket): a new connection is used, and on
   * `101 Switching Protocols` it is handed over in `upgraded`.
   */
  upgrade?: boolean;
}

/** The upstream's answer. */
export interface UpstreamReply {
  /** The status line and fields. */
  head: ResponseHead;
  /** The body, `null` when the response has none. */
  body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
  /** The body's length, when known. */
  length: number | null;
  /** After `101 Switching Protocols`: the connection, now the caller's. */
  upgraded?: { conn: Deno.TcpConn; rest: Uint8Array };
}

const READ_SIZE = 64 * 1024;
const SCRATCH_SIZE = 16 * 1024;
/** Shared, never written: a connection with no bytes left over. */
const EMPTY = new Uint8Array(0);
const NOTHING = () => {};
const NO_BODY = { kind: "none" } as const;
const CHUNKED = { kind: "chunked" } as const;
/** Non-idempotent requests do not reuse a connection idle longer than this. */
const RISKY_IDLE_MS = 2000;
const IDEMPOTENT = new Set([
  "GET",
  "HEAD",
  "PUT",
  "DELETE",
  "OPTIONS",
  "TRACE",
]);

class Connection {
  conn: Deno.TcpConn;
  pending: Uint8Array = EMPTY;
  reused = false;
  idleSince = 0;
  idleRead: Promise<number | null | Error> | null = null;
  idleBuf: Uint8Array | null = null;
  /** Reused for reads of the response head; what is kept is copied out. */
  scratch = new Uint8Array(SCRATCH_SIZE);
  /**
   * Reused for request heads with small bodies: a write has finished with
   * its bytes when it settles, and one exchange at a time uses a connection.
   */
  out: Uint8Array | null = null;
  closed = false;
  /** When the current read or write times out (epoch ms); 0 when none. */
  deadline = 0;
  /** The watchdog closed the connection because a deadline passed. */
  expired = false;

  constructor(conn: Deno.TcpConn) {
    this.conn = conn;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/** A timer fired first (nginx's send or read timeout). */
class TimerExpired extends Error {}

/**
 * Watches one call's client for going away, on behalf of the current phase
 * (connecting, or sending and waiting for the head), whose `onAbort` stops
 * it. A lazy signal is read by the watchdog ({@linkcode UpstreamCall.signal}).
 */
class ClientWatch {
  #source: (() => AbortSignal) | null;
  #signal: AbortSignal | null = null;
  /** When the call started (epoch ms). */
  since: number;
  /** Stops the current phase; set by each phase. */
  onAbort: () => void = NOTHING;
  #listener = () => this.onAbort();

  constructor(source: AbortSignal | (() => AbortSignal), now: number) {
    this.since = now;
    if (typeof source === "function") {
      this.#source = source;
    } else {
      this.#source = null;
      this.#attach(source);
    }
  }

  /** Whether the client is known to be gone. */
  get aborted(): boolean {
    return this.#signal?.aborted === true;
  }

  /** Whether the lazy signal has yet to be read. */
  get pending(): boolean {
    return this.#source !== null;
  }

  /** Reads the lazy signal and starts listening. */
  attach(): void {
    const source = this.#source;
    if (source === null) return;
    this.#source = null;
    this.#attach(source());
  }

  #attach(signal: AbortSignal): void {
    this.#signal = signal;
    signal.addEventListener("abort", this.#listener, { once: true });
  }

  /** Stops listening. */
  detach(): void {
    this.#source = null;
    this.#signal?.removeEventListener("abort", this.#listener);
  }
}

/**
 * How often the watchdog looks for expired operations. A timer armed and
 * cleared around every read and write cost 15-100 µs per operation
 * (measured against 5 µs for the write itself); nginx keeps deadlines in a
 * timer tree, and this does the same with one interval per client that runs
 * only while operations are in flight. Timeouts fire within this period.
 */
const WATCHDOG_MS = 50;

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A keep-alive HTTP/1.1 client for one upstream peer. */
export class UpstreamClient {
  #options: UpstreamClientOptions;
  #idle: Connection[] = [];
  #maxIdle: number;
  #idleTimeoutMs: number;
  #family: OsFamily;
  #gcPacer: GcPacer;
  #closed = false;
  #timed = new Set<Connection>();
  /** Calls whose client may need watching (see ClientWatch). */
  #watches = new Set<ClientWatch>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #watchdog: ReturnType<typeof setInterval> | undefined;

  /**
   * Creates the client; connections are opened on demand.
   *
   * @param options The peer, timers and pool settings.
   */
  constructor(options: UpstreamClientOptions) {
    this.#options = options;
    this.#maxIdle = options.maxIdle ?? 32;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.#family = options.family ??
      (Deno.build.os === "windows" ? "windows" : "linux");
    this.#gcPacer = options.gcPacer ?? new GcPacer();
  }

  /** Idle connections in the pool (for tests and status). */
  get idleCount(): number {
    return this.#idle.length;
  }

  /** Closes every pooled connection; later calls still work. */
  close(): void {
    this.#closed = true;
    for (const c of this.#idle.splice(0)) c.close();
    clearInterval(this.#watchdog);
    this.#watchdog = undefined;
    this.#timed.clear();
    this.#watches.clear();
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  /**
   * Starts the deadline of one read or write, kept by the watchdog; the
   * caller awaits the operation inline, turns its failure into
   * {@linkcode TimerExpired} when `c.expired`, and clears `c.deadline`
   * (no wrapper closure or extra promise per operation).
   */
  #arm(c: Connection, ms: number): void {
    c.deadline = Date.now() + ms;
    this.#timed.add(c);
    this.#startWatchdog();
  }

  #startWatchdog(): void {
    if (this.#watchdog === undefined) {
      this.#watchdog = setInterval(() => this.#tick(), WATCHDOG_MS);
      Deno.unrefTimer(this.#watchdog as unknown as number);
    }
  }

  #sweep(): void {
    const oldest = Date.now() - this.#idleTimeoutMs;
    this.#idle = this.#idle.filter((c) => {
      if (c.closed) return false;
      if (c.idleSince > oldest) return true;
      c.close();
      return false;
    });
    if (this.#idle.length === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }

  #tick(): void {
    const now = Date.now();
    for (const c of this.#timed) {
      if (c.closed || c.deadline === 0) {
        this.#timed.delete(c);
      } else if (now >= c.deadline) {
        this.#timed.delete(c);
        c.expired = true;
        c.close(); // fails the pending read or write
      }
    }
    // A call still waiting after a full period: now the client is watched.
    for (const w of this.#watches) {
      if (!w.pending) this.#watches.delete(w);
      else if (now - w.since >= WATCHDOG_MS) {
        this.#watches.delete(w);
        w.attach();
      }
    }
    if (this.#timed.size === 0 && this.#watches.size === 0) {
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
    }
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
    if (watch.pending) {
      this.#watches.add(watch);
      this.#startWatchdog();
    }
    // One async layer for the pooled try and the fresh one: each layer is
    // a frame and promises of garbage per request.
    try {
      const retryable = IDEMPOTENT.has(call.method) &&
        call.body?.kind !== "stream";
      const risky = !IDEMPOTENT.has(call.method);
      const first = call.upgrade ? null : this.#takeIdle(risky);
      if (first !== null) {
        try {
          return await this.#exchange(first, call, watch);
        } catch (error) {
          const stale = error instanceof UpstreamError &&
            (error as UpstreamError & { stale?: boolean }).stale === true;
          if (!(stale && retryable)) throw error;
          // The pooled connection was closed under us before any response
          // byte: the request was not processed, so it is safe to resend.
        }
      }
      const fresh = await this.#connect(watch);
      return await this.#exchange(fresh, call, watch);
    } finally {
      this.#watches.delete(watch);
      watch.detach();
    }
  }

  #takeIdle(risky: boolean): Connection | null {
    const now = Date.now();
    while (this.#idle.length > 0) {
      const c = this.#idle.pop()!;
      if (c.closed) continue;
      if (risky && now - c.idleSince > RISKY_IDLE_MS) {
        c.close();
        continue;
      }
      c.reused = true;
      return c;
    }
    return null;
  }

  #release(c: Connection): void {
    if (
      this.#closed || c.closed || this.#idle.length >= this.#maxIdle ||
      c.pending.length > 0
    ) {
      c.close();
      return;
    }
    c.idleSince = Date.now();
    c.idleBuf = c.scratch;
    // A pending read while idle: it settles when the upstream closes the
    // connection (or, illegally, sends bytes), and the connection is dropped.
    // One promise for both outcomes (not .catch then .then): this runs
    // once per proxied request.
    c.idleRead = c.conn.read(c.idleBuf).then(
      (n) => this.#settledIdle(c, n),
      (e) => this.#settledIdle(c, e as Error),
    );
    // Idle connections past idleTimeoutMs are closed by one sweep per
    // second (a timer per returned connection was a timer per request).
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(() => this.#sweep(), 1000);
      Deno.unrefTimer(this.#sweeper as unknown as number);
    }
    this.#idle.push(c);
  }

  /**
   * A pooled connection's pending read settled: the upstream closed it (or
   * sent bytes it should not have), so it leaves the pool. If an exchange
   * picked it up meanwhile, that exchange sees `result` through `idleRead`.
   */
  #settledIdle<T>(c: Connection, result: T): T {
    const at = this.#idle.indexOf(c);
    if (at !== -1) {
      this.#idle.splice(at, 1);
      c.close();
    }
    return result;
  }

  #timedOut(action: UpstreamAction): UpstreamError {
    return upstreamTimeout(action, this.#family);
  }

  async #connect(watch: ClientWatch): Promise<Connection> {
    if (watch.aborted) throw UpstreamError.clientClosed();
    this.#options.onConnect?.();
    const timer = new AbortController();
    const id = setTimeout(
      () => timer.abort(),
      this.#options.timeouts.connectMs,
    );
    watch.onAbort = () => timer.abort();
    try {
      const conn = await Deno.connect({
        hostname: this.#options.hostname,
        port: this.#options.port,
        signal: timer.signal,
      });
      conn.setNoDelay(true);
      return new Connection(conn);
    } catch (error) {
      if (watch.aborted) throw UpstreamError.clientClosed(error);
      if (timer.signal.aborted) throw this.#timedOut("connecting to upstream");
      throw upstreamErrorFromOs(error, "connecting to upstream", this.#family, {
        upstreamHost: this.#options.hostname,
      });
    } finally {
      clearTimeout(id);
      watch.onAbort = NOTHING;
    }
  }

  async #write(c: Connection, bytes: Uint8Array): Promise<void> {
    let written = 0;
    while (written < bytes.length) {
      this.#arm(c, this.#options.timeouts.sendMs);
      try {
        written += await c.conn.write(
          written === 0 ? bytes : bytes.subarray(written),
        );
      } catch (error) {
        throw c.expired ? new TimerExpired() : error;
      } finally {
        c.deadline = 0;
      }
    }
  }

  /**
   * Reads what is there. `fresh` returns a newly allocated buffer the caller
   * may keep (body chunks handed to the client); otherwise the bytes are
   * read into the connection's scratch buffer and a view of it is returned,
   * valid until the next read: the caller copies what it keeps, so a small
   * answer allocates only its own size, not 64 KiB (a fresh 64 KiB per read
   * made GC pauses of tens of milliseconds under load).
   */
  async #read(c: Connection, fresh = false): Promise<Uint8Array | null> {
    if (c.idleRead !== null) {
      // The read started while the connection sat in the pool.
      this.#arm(c, this.#options.timeouts.readMs);
      let result;
      try {
        result = await c.idleRead;
      } finally {
        c.deadline = 0;
      }
      const buf = c.idleBuf!;
      c.idleRead = null;
      c.idleBuf = null;
      if (result instanceof Error) {
        if (c.expired) throw new TimerExpired();
        throw result;
      }
      return result === null ? null : buf.subarray(0, result);
    }
    const buf = fresh ? new Uint8Array(READ_SIZE) : c.scratch;
    this.#arm(c, this.#options.timeouts.readMs);
    let n;
    try {
      n = await c.conn.read(buf);
    } catch (error) {
      throw c.expired ? new TimerExpired() : error;
    } finally {
      c.deadline = 0;
    }
    if (n === null) return null;
    return buf.subarray(0, n);
  }

  /**
   * Writes the request. Not `async` itself: a buffered request (nearly all)
   * is one write, and an async layer per call is garbage per request.
   */
  #sendRequest(c: Connection, call: UpstreamCall): Promise<void> {
    const body = call.body;
    const framing = body === null
      ? NO_BODY
      : body.kind === "bytes"
      ? { kind: "length" as const, length: body.bytes.length }
      : body.length === null
      ? CHUNKED
      : { kind: "length" as const, length: body.length };
    const options = {
      method: call.method,
      path: call.path,
      host: call.host,
      headers: call.headers,
      framing,
    };
    if (body?.kind === "stream") {
      return this.#sendStreamed(c, serializeRequestHead(options), body);
    }
    const bodySize = body === null ? 0 : body.bytes.length;
    if (bodySize < SCRATCH_SIZE) {
      const out = c.out ??= new Uint8Array(SCRATCH_SIZE);
      const n = writeRequestHead(options, out);
      if (n !== -1 && n + bodySize <= out.length) {
        if (body !== null) out.set(body.bytes, n);
        return this.#write(c, out.subarray(0, n + bodySize));
      }
    }
    const head = serializeRequestHead(options);
    return this.#write(c, body === null ? head : concat(head, body.bytes));
  }

  async #sendStreamed(
    c: Connection,
    head: Uint8Array,
    body: { stream: ReadableStream<Uint8Array>; length: number | null },
  ): Promise<void> {
    await this.#write(c, head);
    await sendBody(body.stream, {
      chunked: body.length === null,
      write: (bytes) => this.#write(c, bytes),
      onReadError: (error) => UpstreamError.clientClosed(error),
    });
  }

  async #exchange(
    c: Connection,
    call: UpstreamCall,
    watch: ClientWatch,
  ): Promise<UpstreamReply> {
    watch.onAbort = () => c.close();
    let got = 0;
    try {
      try {
        await this.#sendRequest(c, call);
      } catch (error) {
        if (error instanceof UpstreamError) throw error;
        if (error instanceof TimerExpired) {
          throw this.#timedOut("sending request to upstream");
        }
        if (watch.aborted) throw UpstreamError.clientClosed(error);
        throw this.#stale(
          c,
          upstreamErrorFromOs(
            error,
            "sending request to upstream",
            this.#family,
          ),
        );
      }
      let buffer: Uint8Array = c.pending;
      c.pending = EMPTY;
      let head: ResponseHead | null = null;
      while (true) {
        head = buffer.length > 0 ? parseResponseHead(buffer) : null;
        if (head !== null) {
          if (head.status >= 100 && head.status < 200 && head.status !== 101) {
            buffer = buffer.subarray(head.headLength); // 100 Continue etc.
            continue;
          }
          break;
        }
        // The next read reuses the scratch buffer a partial head may be in.
        if (buffer.buffer === c.scratch.buffer) buffer = buffer.slice();
        let chunk: Uint8Array | null;
        try {
          chunk = await this.#read(c);
        } catch (error) {
          if (error instanceof TimerExpired) {
            throw this.#timedOut("reading response header from upstream");
          }
          if (watch.aborted) throw UpstreamError.clientClosed(error);
          const e = upstreamErrorFromOs(
            error,
            "reading response header from upstream",
            this.#family,
          );
          throw got === 0 ? this.#stale(c, e) : e;
        }
        if (chunk === null) {
          const e = new UpstreamError(
            "upstream prematurely closed connection",
            {
              kind: "premature-close",
              action: "reading response header from upstream",
            },
          );
          throw got === 0 ? this.#stale(c, e) : e;
        }
        got += chunk.length;
        buffer = concat(buffer, chunk);
      }
      const rest = buffer.subarray(head.headLength);
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
      const reply = this.#body(c, { call, watch, head, framing, rest });
      watch.onAbort = NOTHING;
      return reply;
    } catch (error) {
      watch.onAbort = NOTHING;
      c.close();
      if (error instanceof UpstreamError) throw error;
      if (error instanceof InvalidResponseError) {
        throw new UpstreamError(error.message, {
          kind: "invalid-response",
          action: "reading response header from upstream",
        });
      }
      throw error;
    }
  }

  #stale(c: Connection, error: UpstreamError): UpstreamError {
    if (c.reused) (error as UpstreamError & { stale?: boolean }).stale = true;
    return error;
  }

  #body(
    c: Connection,
    { call, watch, head, framing, rest }: {
      call: UpstreamCall;
      watch: ClientWatch;
      head: ResponseHead;
      framing: ResponseFraming;
      rest: Uint8Array;
    },
  ): UpstreamReply {
    const reusable = keepsAlive(head) && framing.kind !== "close";
    if (framing.kind === "none") {
      if (reusable) this.#release(c);
      else c.close();
      return { head, body: null, length: null };
    }
    if (framing.kind === "length" && rest.length >= framing.length) {
      // The whole body arrived with the head: no stream needed.
      c.pending = rest.subarray(framing.length);
      if (reusable && c.pending.length === 0) this.#release(c);
      else c.close();
      return {
        head,
        body: rest.slice(0, framing.length),
        length: framing.length,
      };
    }
    const decoder = framing.kind === "chunked" ? new ChunkedDecoder() : null;
    let left = framing.kind === "length" ? framing.length : Infinity;
    // The client keeps each chunk until it is sent, and the scratch buffer
    // is read into again once the connection is back in the pool.
    let first: Uint8Array | null = rest.length === 0
      ? null
      : rest.buffer === c.scratch.buffer
      ? rest.slice()
      : rest;
    // Deno.serve cancels the body when the client goes away; a read pending
    // then fails because cancel() closed the connection, not the upstream.
    let cancelled = false;
    const fail = (
      controller: ReadableStreamDefaultController<Uint8Array>,
      e: UpstreamError,
    ) => {
      c.close();
      call.onBodyError(e);
      controller.error(e);
    };
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let chunk: Uint8Array | null;
        if (first !== null) {
          chunk = first;
          first = null;
        } else {
          try {
            chunk = await this.#read(c, true);
          } catch (error) {
            if (cancelled || watch.aborted) {
              c.close();
              return controller.error(UpstreamError.clientClosed(error));
            }
            return fail(
              controller,
              error instanceof TimerExpired
                ? this.#timedOut("reading upstream")
                : upstreamErrorFromOs(error, "reading upstream", this.#family),
            );
          }
        }
        if (chunk === null) {
          if (framing.kind === "close") {
            c.close();
            return controller.close();
          }
          return fail(
            controller,
            new UpstreamError("upstream prematurely closed connection", {
              kind: "premature-close",
              action: "reading upstream",
            }),
          );
        }
        // Each chunk holds a buffer of its own until Deno.serve has sent it.
        this.#gcPacer.add(chunk.buffer.byteLength);
        if (decoder !== null) {
          let out;
          try {
            out = decoder.push(chunk);
          } catch (error) {
            if (!(error instanceof ChunkedFormatError)) throw error;
            return fail(
              controller,
              new UpstreamError("upstream sent invalid chunked response", {
                kind: "invalid-response",
                action: "reading upstream",
              }),
            );
          }
          // Each read has its own buffer (#read), so pieces need no copy.
          for (const piece of out.data) controller.enqueue(piece);
          if (decoder.done) {
            c.pending = chunk.subarray(out.used);
            if (reusable && c.pending.length === 0) this.#release(c);
            else c.close();
            controller.close();
          }
          return;
        }
        const take = Math.min(left, chunk.length);
        controller.enqueue(chunk.subarray(0, take));
        left -= take;
        if (left === 0) {
          c.pending = chunk.subarray(take);
          if (reusable && c.pending.length === 0) this.#release(c);
          else c.close();
          controller.close();
        }
      },
      cancel: () => {
        // The client went away mid-body: this connection is unusable.
        cancelled = true;
        c.close();
      },
    }, { highWaterMark: 0 });
    return {
      head,
      body: stream,
      length: framing.kind === "length" ? framing.length : null,
    };
  }
}
