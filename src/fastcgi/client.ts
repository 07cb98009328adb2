/**
 * The FastCGI transport of one server (`UpstreamTransport`): a new
 * connection per request (`fastcgi_keep_conn off`), the request's records
 * written (`records.ts`), the body as `STDIN` records, then the reply's
 * head read (`reply_head.ts`) and its body streamed (`reply_body.ts`).
 *
 * The request's own part (its encoded parameters, its log) is found by the
 * call's `signal` object, the client's `Request` the proxy's walk hands
 * every server (`proxy/proxy.ts`): the walk, its body handling and its
 * failure lines are the proxy's, unchanged.
 *
 * @module
 */

import {
  GATHER_PIECE,
  type UpstreamCall,
  UpstreamError,
  type UpstreamReply,
  type UpstreamServerSpec,
  type UpstreamTimeouts,
  type UpstreamTransport,
  WriteGather,
} from "../upstream/mod.ts";
import { STDIN_CHUNK, stdinRecords } from "./records.ts";
import { readReply, type StderrLog } from "./reply_head.ts";
import { TimedConn } from "./timed_conn.ts";

/** One request's part in the exchange, besides the call. */
export interface FastcgiRequest {
  /**
   * `BEGIN_REQUEST` and the `PARAMS` records, encoded once the body is
   * read (its length is `$content_length` then, as in nginx), or the
   * length nginx refuses.
   */
  records(body: UpstreamCall["body"]): Uint8Array | { tooBig: number };
  /** `fastcgi_pass_request_body`: the body goes as `STDIN`. */
  readonly sendBody: boolean;
  /**
   * Logs one piece of `STDERR` (`FastCGI sent in stderr: "…"`) with its
   * phase and the server's `host:port`.
   */
  onStderr: StderrLog;
}

const requests = new WeakMap<object, FastcgiRequest>();

/**
 * Gives a request's part to the transports that will be handed `key` as
 * their call's `signal` (the client's `Request`).
 *
 * @param key The client's `Request`.
 * @param request Its records and log.
 */
export function attachRequest(key: object, request: FastcgiRequest): void {
  requests.set(key, request);
}

function signalOf(signal: UpstreamCall["signal"]): AbortSignal | null {
  if (typeof signal === "function") return signal();
  return signal instanceof AbortSignal ? signal : signal.signal;
}

/**
 * The parameters do not fit one `PARAMS` record: not the server's failure
 * but the request's (nginx's 500 and `[alert]`), so no `UpstreamError`.
 */
export class RecordTooBig extends Error {
  /** The parameters' length. */
  readonly length: number;

  /** @param length The parameters' length. */
  constructor(length: number) {
    super(`fastcgi request record is too big: ${length}`);
    this.name = "RecordTooBig";
    this.length = length;
  }
}

/** The transport of one FastCGI server. */
export class FastcgiTransport implements UpstreamTransport {
  readonly #spec: UpstreamServerSpec;
  readonly #timeouts: UpstreamTimeouts;
  readonly #onConnect: (() => void) | undefined;

  /**
   * @param spec The server.
   * @param timeouts The timers when a call brings none.
   * @param onConnect Counts each new connection.
   */
  constructor(
    spec: UpstreamServerSpec,
    timeouts: UpstreamTimeouts,
    onConnect?: () => void,
  ) {
    this.#spec = spec;
    this.#timeouts = timeouts;
    this.#onConnect = onConnect;
  }

  /** No connection is kept between requests. */
  get idleCount(): number {
    return 0;
  }

  /** Nothing kept to close. */
  close(): void {}

  /**
   * Sends one request and reads the reply's head.
   *
   * @param call The call (its `signal` is the client's `Request`).
   * @returns The head and the body's stream.
   * @throws {UpstreamError} The failure with nginx's words and phase.
   */
  async send(call: UpstreamCall): Promise<UpstreamReply> {
    const key = call.signal as object;
    const request = requests.get(key);
    if (request === undefined) {
      throw new TypeError("Cannot send a FastCGI request: no records for it");
    }
    const records = request.records(call.body);
    if (!(records instanceof Uint8Array)) {
      throw new RecordTooBig(records.tooBig);
    }
    this.#onConnect?.();
    const conn = await TimedConn.open(
      this.#spec.address,
      call.timeouts ?? this.#timeouts,
      signalOf(call.signal),
    );
    // The try this send is: the connection may close after the call has
    // moved on to another server (UpstreamCall.onEnd).
    const tryIndex = call.tryIndex;
    conn.onClose = () => call.onEnd?.(tryIndex);
    call.onConnected?.();
    try {
      await conn.write(records);
      await writeBody(conn, request.sendBody ? call.body : null);
      return await readReply(conn, call, {
        onStderr: request.onStderr,
        peer: this.#spec.address.peer,
        bufferSize: call.headBufferSize ?? 4096,
      });
    } catch (error) {
      conn.close();
      throw error;
    }
  }
}

/** Bytes asked for per read of a streamed body, Deno's socket chunk. */
const STDIN_READ = 64 * 1024;

/** The body as `STDIN` records, then the empty one that ends it. */
async function writeBody(
  conn: TimedConn,
  body: UpstreamCall["body"],
): Promise<void> {
  if (body?.kind === "bytes") {
    if (body.bytes.length > 0) await conn.write(stdinRecords(body.bytes));
  } else if (body?.kind === "file") {
    // By position: another send of the body may be reading it too.
    const chunk = new Uint8Array(STDIN_CHUNK);
    for (let left = body.length; left > 0;) {
      const n = await body.file.readAt(
        chunk.subarray(0, Math.min(left, chunk.length)),
        body.length - left,
      );
      if (n === null) break;
      left -= n;
      await conn.write(stdinRecords(chunk.subarray(0, n)));
    }
  } else if (body?.kind === "stream") {
    // Each piece as it comes: nothing of the body is held past its write.
    // Read into one reused buffer (its records are a copy): a default
    // reader of Deno.serve's byte stream gives each piece a new 64 KiB
    // buffer, which a body of one-byte chunks made a collector's storm.
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = body.stream.getReader({ mode: "byob" });
    } catch {
      // Not a byte stream: a body built in JS rather than by Deno.serve.
    }
    const reader = byob ?? body.stream.getReader();
    let buffer = new ArrayBuffer(byob === null ? 0 : STDIN_READ);
    // Each wait for the client's bytes is timed (client_body_timeout).
    const timer = body.timer;
    const cancel = timer && (() => void reader.cancel().catch(() => {}));
    let received = 0;
    // Small pieces go as one record run (made at the first one): a chunked
    // body of one-byte chunks was a record and a write per byte.
    let gather: WriteGather | null = null;
    try {
      while (true) {
        let read: ReadableStreamReadResult<Uint8Array>;
        timer?.reading(cancel!);
        try {
          read = byob === null
            ? await (reader as ReadableStreamDefaultReader<Uint8Array>).read()
            : await byob.read(new Uint8Array(buffer));
        } catch (error) {
          // The client's body broke off: the client left, or sent bad
          // framing (the proxy's walk tells the two apart by the cause);
          // nginx's 400 and line for a body cut while it is sent.
          throw error instanceof UpstreamError
            ? error
            : timer?.timedOut
            ? UpstreamError.clientBodyTimedOut(error, received)
            : UpstreamError.clientBodyClosed(error, received);
        } finally {
          timer?.read();
        }
        // A cancelled read settles done: the body did not end (nginx's 408).
        if (timer?.timedOut) {
          throw UpstreamError.clientBodyTimedOut(undefined, received);
        }
        if (read.done) {
          body.received = received;
          break;
        }
        const piece = read.value;
        // A BYOB read detached `buffer`; the same memory came back.
        if (byob !== null) buffer = piece.buffer as ArrayBuffer;
        received += piece.length;
        if (piece.length === 0) continue;
        if (piece.length < GATHER_PIECE) {
          gather ??= new WriteGather(
            (block, length) =>
              conn.write(stdinRecords(new Uint8Array(block, 0, length))),
            0,
            0,
            // A read waiting for the client ends, and the write's error
            // is thrown.
            () => void reader.cancel().catch(() => {}),
          );
          const full = gather.add(piece);
          if (full !== null) await full;
          continue;
        }
        if (gather !== null) await gather.flush();
        await conn.write(stdinRecords(piece));
      }
      if (gather !== null) await gather.flush();
    } finally {
      reader.releaseLock();
    }
  }
  await conn.write(stdinRecords(new Uint8Array(0)));
}
