/**
 * Sending a long request body while a read waits for the upstream's
 * answer, for the upstream client (`client.ts`).
 *
 * @module
 */

import type { Connection } from "./connection.ts";
import { type ConnectionIo, writeRequest } from "./io.ts";
import { UpstreamError } from "./error.ts";
import type { UpstreamCall } from "./types.ts";

/** Bodies larger than this are sent with a read waiting for an early answer. */
const EARLY_ANSWER_BYTES = 64 * 1024;

/**
 * The body takes more than one write, so the upstream may answer before
 * it is sent whole.
 *
 * @param call The request.
 * @returns Whether to send it with {@linkcode sendWatching}.
 */
export function sendsLong(call: UpstreamCall): boolean {
  const body = call.body;
  if (body === null || call.upgrade) return false;
  return body.kind !== "bytes" || body.bytes.length > EARLY_ANSWER_BYTES;
}

/**
 * Sends a long request while a read waits for the upstream's answer, as
 * nginx reads the upstream while it sends (the read handler is
 * `ngx_http_upstream_process_header` from the connect on): an upstream
 * that answers early (a 401 without reading an upload) and closes is
 * relayed, not a `writev() failed` 502. The read is the one `readSome`
 * takes over (`idleRead`). Once the upstream has answered, the rest of
 * the body is not waited for, and the connection is not kept.
 *
 * @param io The timers and watchdog.
 * @param c The connection.
 * @param call The request.
 * @throws The write's failure when no answer came; an {@linkcode UpstreamError}
 * when reading the client's body failed.
 */
export async function sendWatching(
  io: ConnectionIo,
  c: Connection,
  call: UpstreamCall,
): Promise<void> {
  c.idleBuf = c.scratch;
  const answer = c.idleRead ??= c.conn.read(c.scratch).then(
    (n) => n,
    (e) => e as Error,
  );
  const writing = writeRequest(io, c, call);
  // Settles the write's outcome either way, so a write left running
  // after an early answer rejects into nothing.
  const written = writing.then(() => null, (e: unknown) => ({ error: e }));
  const first = await Promise.race([
    written,
    answer.then(() => "answered" as const),
  ]);
  if (first === "answered") {
    if (typeof (await answer) === "number") {
      c.abandoned = true;
      return;
    }
    // Closed or reset without an answer: the write says why.
    const outcome = await written;
    if (outcome !== null) throw outcome.error;
    return;
  }
  if (first === null) return;
  // The body's own failure (the client left) is not the upstream's.
  if (first.error instanceof UpstreamError) throw first.error;
  if (typeof (await answer) === "number") {
    c.abandoned = true;
    return;
  }
  throw first.error;
}
