/**
 * Reads and writes on one upstream connection under nginx's timers: each
 * operation arms the watchdog for `proxy_send_timeout` or
 * `proxy_read_timeout` (between two successive operations, not a total),
 * and a connection the watchdog closed reports {@linkcode TimerExpired}
 * instead of the socket's own error.
 *
 * @module
 */

import { serializeRequestHead, writeRequestHead } from "./request_head.ts";
import { sendBody } from "./request_body.ts";
import { type Connection, SCRATCH_SIZE, TimerExpired } from "./connection.ts";
import { UpstreamError } from "./error.ts";
import type { UpstreamCall, UpstreamTimeouts } from "./types.ts";
import type { BodyFile } from "./body_file.ts";
import type { Watchdog } from "./watchdog.ts";

/** What a streamed body chunk is read into: a fresh buffer per read. */
const READ_SIZE = 64 * 1024;
const NO_BODY = { kind: "none" } as const;
const CHUNKED = { kind: "chunked" } as const;

/** The timers and the watchdog that enforces them, shared by a client. */
export interface ConnectionIo {
  /** Closes a connection whose deadline passed. */
  watchdog: Watchdog;
  /** nginx's timers. */
  timeouts: UpstreamTimeouts;
}

/**
 * Joins two byte arrays (the first may be empty, then the second is returned
 * as it is).
 *
 * @param a The first part.
 * @param b The second part.
 * @returns `a` followed by `b`.
 *
 * @example Usage
 * ```ts
 * import { concat } from "./io.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(
 *   concat(new Uint8Array([1]), new Uint8Array([2, 3])),
 *   new Uint8Array([1, 2, 3]),
 * );
 * ```
 */
export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Writes all of `bytes`, each write under the send timer.
 *
 * @param io The timers and watchdog.
 * @param c The connection.
 * @param bytes What to write.
 * @throws {TimerExpired} When the send timer fired; the socket's error otherwise.
 */
export async function writeAll(
  io: ConnectionIo,
  c: Connection,
  bytes: Uint8Array,
): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    io.watchdog.arm(c, (c.timeouts ?? io.timeouts).sendMs);
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
 * Reads what is there, under the read timer. `fresh` returns a newly
 * allocated buffer the caller may keep (body chunks handed to the client);
 * otherwise the bytes are read into the connection's scratch buffer and a
 * view of it is returned, valid until the next read: the caller copies what
 * it keeps, so a small answer allocates only its own size, not 64 KiB (a
 * fresh 64 KiB per read made GC pauses of tens of milliseconds under load).
 *
 * @param io The timers and watchdog.
 * @param c The connection.
 * @param fresh Return a buffer of its own rather than a view of the scratch.
 * @returns The bytes read, or `null` at the end of the stream.
 * @throws {TimerExpired} When the read timer fired; the socket's error otherwise.
 */
export async function readSome(
  io: ConnectionIo,
  c: Connection,
  fresh = false,
): Promise<Uint8Array | null> {
  if (c.idleRead !== null) {
    // The read started while the connection sat in the pool.
    io.watchdog.arm(c, (c.timeouts ?? io.timeouts).readMs);
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
  io.watchdog.arm(c, (c.timeouts ?? io.timeouts).readMs);
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
 * Writes the request: head and a buffered body in one write (in the
 * connection's reusable buffer when they fit), a streamed body after the
 * head. Not `async` itself: a buffered request (nearly all) is one write,
 * and an async layer per call is garbage per request.
 *
 * @param io The timers and watchdog.
 * @param c The connection.
 * @param call The request.
 * @throws {UpstreamError} When reading a streamed body from the client failed.
 * @throws {TimerExpired} When the send timer fired; the socket's error otherwise.
 */
export function writeRequest(
  io: ConnectionIo,
  c: Connection,
  call: UpstreamCall,
): Promise<void> {
  const body = call.body;
  const framing = body === null
    ? NO_BODY
    : body.kind === "bytes"
    ? { kind: "length" as const, length: body.bytes.length }
    : body.kind === "file"
    ? { kind: "length" as const, length: body.length }
    : body.length === null
    ? CHUNKED
    : { kind: "length" as const, length: body.length };
  const options = {
    method: call.method,
    path: call.path,
    host: call.host,
    headers: call.headers,
    framing,
    version: call.version,
    leading: call.leading,
  };
  if (body?.kind === "stream") {
    return writeStreamed(io, c, serializeRequestHead(options), body);
  }
  if (body?.kind === "file") {
    return writeFile(io, c, serializeRequestHead(options), body);
  }
  const bodySize = body === null ? 0 : body.bytes.length;
  if (bodySize < SCRATCH_SIZE) {
    const out = c.out ??= new Uint8Array(SCRATCH_SIZE);
    const n = writeRequestHead(options, out);
    if (n !== -1 && n + bodySize <= out.length) {
      if (body !== null) out.set(body.bytes, n);
      return writeAll(io, c, out.subarray(0, n + bodySize));
    }
  }
  const head = serializeRequestHead(options);
  return writeAll(io, c, body === null ? head : concat(head, body.bytes));
}

/**
 * Writes the head, then the file from its start: a buffered body is sent
 * again whole on a retry. Read by position: the write of an earlier try
 * may still be running (`early_answer.ts`). One buffer per send, reused
 * for every read.
 */
async function writeFile(
  io: ConnectionIo,
  c: Connection,
  head: Uint8Array,
  body: { file: BodyFile; length: number },
): Promise<void> {
  await writeAll(io, c, head);
  const buf = new Uint8Array(READ_SIZE);
  let sent = 0;
  while (sent < body.length) {
    const n = await body.file.readAt(
      buf.subarray(0, Math.min(buf.length, body.length - sent)),
      sent,
    );
    if (n === null) throw new Error("request body file ended early");
    await writeAll(io, c, buf.subarray(0, n));
    sent += n;
  }
}

async function writeStreamed(
  io: ConnectionIo,
  c: Connection,
  head: Uint8Array,
  body: Extract<UpstreamCall["body"], { kind: "stream" }>,
): Promise<void> {
  await writeAll(io, c, head);
  const timer = body.timer;
  body.received = await sendBody(body.stream, {
    chunked: body.length === null,
    write: (bytes) => writeAll(io, c, bytes),
    onReadError: (error, received) =>
      timer?.timedOut
        ? UpstreamError.clientBodyTimedOut(error, received)
        : UpstreamError.clientBodyClosed(error, received),
    timer,
  });
}
