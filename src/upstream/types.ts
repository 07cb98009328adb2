/**
 * What the upstream client is given and gives back: its options and nginx's
 * timers, one call, and the reply.
 *
 * @module
 */

import type { GcPacer } from "../runtime/mod.ts";
import type { OsFamily } from "../runtime/mod.ts";
import type { ResponseHead } from "./http1.ts";
import type { UpstreamError } from "./error.ts";
import type { BodyFile } from "./body_file.ts";

/** nginx's upstream timers, in milliseconds. */
export interface UpstreamTimeouts {
  /** `proxy_connect_timeout`: establishing the connection. */
  connectMs: number;
  /** `proxy_send_timeout`: between two successive writes. */
  sendMs: number;
  /** `proxy_read_timeout`: between two successive reads. */
  readMs: number;
}

/** Options for `UpstreamClient` (upstream/client.ts). */
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
  /**
   * nginx's `proxy_buffer_size`: a response head larger than this is
   * "upstream sent too big header" (502).
   *
   * @default {4096}
   */
  headBufferSize?: number;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
  /** Paces collections of streamed body chunks; one may serve many clients. */
  gcPacer?: GcPacer;
  /** The clock idle connections are timed by, in milliseconds (tests). */
  now?: () => number;
}

/**
 * `client_body_timeout` of a body streamed upstream as it is read, kept by
 * the body's owner: only the waits for the client's bytes are timed, not
 * the writes upstream between them, as nginx arms the client's read timer
 * when a read finds nothing and deletes it while the upstream is busy
 * (ngx_http_do_read_client_request_body). Each read is told before and
 * after: `reading()`, the read, `read()`, then `timedOut`.
 */
export interface BodyReadTimer {
  /**
   * A read of the body begins to wait for the client.
   *
   * @param cancel Ends that read (it settles done or failed) when the
   * wait passes the timeout.
   */
  reading(cancel: () => void): void;
  /** The read settled: nothing is timed until the next one. */
  read(): void;
  /** A wait passed the timeout: its read was cancelled, not ended. */
  readonly timedOut: boolean;
}

/**
 * One request for the upstream.
 *
 * The proxy passes one object for every try of a request and changes its
 * `host` and `tryIndex` to the next server's between tries
 * (`proxy/proxy.ts`, `PeerExchange`): a transport reads the request's
 * fields (`host`, `path`, `headers`, `tryIndex`, …) before the promise of
 * its send settles and not after; it calls the hooks (`onBodyError`,
 * `onBodyWarning`, `onEnd`) later, as the answer's body runs, which the
 * call's owner routes to the server tried; `onEnd` with the `tryIndex` it
 * read, so a late end of an earlier try frees nothing of a later one.
 */
export interface UpstreamCall {
  /** The method. */
  method: string;
  /** The path and query. */
  path: string;
  /** The `Host` header value. */
  host: string;
  /** Header fields, already filtered. */
  headers: readonly (readonly [string, string])[];
  /**
   * The body: buffered bytes, a file it was buffered to (read from its
   * start each time it is sent, each send at its own position: tries may
   * overlap), a stream of known length, or `null`.
   */
  body:
    | { kind: "bytes"; bytes: Uint8Array }
    | { kind: "file"; file: BodyFile; length: number }
    | {
      kind: "stream";
      stream: ReadableStream<Uint8Array>;
      length: number | null;
      /** Times each wait for the client's bytes (`client_body_timeout`). */
      timer?: BodyReadTimer;
      /** Set once it was sent whole: the bytes read of it. */
      received?: number;
    }
    | null;
  /**
   * Aborts when the client goes away. A function is called only once the
   * exchange has been waiting for one watchdog period: `req.signal` of
   * `Deno.serve` starts a per-request cancel watch in Deno when first read,
   * a cost every request would pay, while nearly every exchange ends well
   * before the client could matter. An object (the client's `Request`)
   * is read the same way, its `signal` then: no closure per request.
   */
  signal: AbortSignal | (() => AbortSignal) | { readonly signal: AbortSignal };
  /** Told about a failure after the head was returned (`while reading upstream`). */
  onBodyError: (error: UpstreamError) => void;
  /**
   * Told about bytes beyond the answer's framing, with nginx's warning: no
   * failure (the answer stands, the connection is closed), so not told as
   * one.
   */
  onBodyWarning: (message: string) => void;
  /**
   * Told when the exchange is over after its head came (the answer read
   * whole, a failure, the client leaving mid-body): the server is freed
   * then (nginx's `u->peer.free`, `least_conn`'s count). A failure before
   * the head rejects `send` instead; an upgraded connection is the
   * caller's. May be told more than once. Told the {@linkcode tryIndex}
   * the send read: only that try's hold is freed.
   */
  onEnd?: (tryIndex?: number) => void;
  /**
   * Which try of the call this send is (its owner counts them; absent when
   * it does not): handed back to {@linkcode onEnd}.
   */
  tryIndex?: number;
  /**
   * A protocol upgrade (WebSocket): a new connection is used, and on
   * `101 Switching Protocols` it is handed over in `upgraded`.
   */
  upgrade?: boolean;
  /** The request line's version (`proxy_http_version`); `1.1` when absent. */
  version?: "1.0" | "1.1";
  /**
   * The fields written before the body's framing field, in place of the
   * `Host` line (a location's `proxy_set_header` list, `Host` among them,
   * as nginx orders them); `headers` follow the framing field.
   */
  leading?: readonly (readonly [string, string])[];
  /** This call's timers (a location's `proxy_*_timeout`); the client's when absent. */
  timeouts?: UpstreamTimeouts;
  /** This call's `proxy_buffer_size`; the client's when absent. */
  headBufferSize?: number;
  /**
   * `false` when the request asked the upstream to close (`Connection:
   * close`): the connection is not kept after the response.
   */
  keepalive?: boolean;
  /**
   * Told when the call has its connection, a kept one at once (the access
   * log's `$upstream_connect_time`).
   */
  onConnected?: (() => void) | undefined;
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

/** The upstream application's address. */
export interface UpstreamAddress {
  /** Host name or IP address (IPv6 without brackets), lower case. */
  hostname: string;
  /** The port. */
  port: number;
  /** `http://host[:port]` as `fetch` and `Location` matching see it. */
  origin: string;
  /** `host:port`, as nginx prints the peer in `upstream: "…"`. */
  peer: string;
}

/** One `server` of the upstream group (parsed by `parseUpstreamServer` in `config/addresses.ts`). */
export interface UpstreamServerSpec {
  /** The address. */
  address: UpstreamAddress;
  /** Used only when every primary is unavailable. */
  backup: boolean;
  /** Failures within `failTimeoutMs` that make the server unavailable (0 = never). */
  maxFails: number;
  /** How long failures count, and how long an unavailable server is skipped. */
  failTimeoutMs: number;
  /** `weight=`: its share of the requests (1 when absent). */
  weight?: number;
  /** `down`: never chosen. */
  down?: boolean;
  /**
   * The address as the `server` directive wrote it, which `hash …
   * consistent` hashes (`peer.server` otherwise).
   */
  server?: string;
}
