/**
 * A response body that did not arrive with its head, as a stream: read from
 * the upstream connection as the client takes it (`highWaterMark: 0`, so the
 * client's pace is the upstream's), decoded when chunked, and the connection
 * handed back to the pool once the body is complete.
 *
 * @module
 */

import { ChunkedDecoder, ChunkedFormatError } from "./chunked_decoder.ts";
import type { GcPacer } from "../runtime/mod.ts";
import type { OsFamily } from "../runtime/mod.ts";
import {
  type ClientWatch,
  type Connection,
  TimerExpired,
} from "./connection.ts";
import {
  UpstreamError,
  upstreamErrorFromOs,
  upstreamTimeout,
} from "./error.ts";
import type { UpstreamCall } from "./types.ts";

/** What a streamed body needs from its client. */
export interface BodySource {
  /**
   * Reads the next bytes into a buffer of their own (the client keeps each
   * chunk until it is sent); `null` at the end of the stream. Throws
   * `TimerExpired` when `proxy_read_timeout` passed.
   */
  read(c: Connection): Promise<Uint8Array | null>;
  /** Puts a connection whose response is complete back in the pool. */
  release(c: Connection): void;
  /** Paces collections of streamed chunks. */
  gcPacer: GcPacer;
  /** The platform, for the error texts. */
  family: OsFamily;
}

/** The body's framing and what came with the head. */
export interface StreamedBody {
  /** The call, told about failures after the head (`onBodyError`). */
  call: UpstreamCall;
  /** The call's client watch: a cancel by the client is not an upstream failure. */
  watch: ClientWatch;
  /** How the body ends. */
  framing:
    | { kind: "length"; length: number }
    | { kind: "chunked" }
    | { kind: "close" };
  /** Body bytes read with the head (may be a view of the scratch buffer). */
  rest: Uint8Array;
  /** The connection may go back to the pool when the body is complete. */
  reusable: boolean;
}

/** nginx's warning for bytes after a length-framed or bodiless answer (`ngx_http_proxy_copy_filter`). */
export const MORE_THAN_LENGTH =
  'upstream sent more data than specified in "Content-Length" header';
/** nginx's warning for bytes after a chunked body's last chunk (`ngx_http_proxy_chunked_filter`). */
export const AFTER_FINAL_CHUNK = "upstream sent data after final chunk";

/**
 * The answer on `c` is complete, and `extra` is what the connection holds
 * beyond its framing. Only a connection holding nothing more goes back to
 * the pool: left-over bytes would be read as the head of the next
 * request's answer (a desync, response splitting). nginx turns keep-alive
 * off and warns (`ngx_http_proxy_copy_filter`, `ngx_http_proxy_chunked_filter`);
 * after an answer to HEAD it says nothing (`ngx_http_upstream_send_response`
 * finalizes before reading on).
 *
 * @param c The connection.
 * @param end What it holds beyond the framing, and what to say about it.
 * @param release Puts a clean connection back in the pool.
 */
export function endOfAnswer(
  c: Connection,
  { extra, reusable, call, warning, tryIndex }: {
    extra: Uint8Array;
    reusable: boolean;
    call: UpstreamCall;
    warning: string | null;
    /** The try the send read (`UpstreamCall.tryIndex`), for `onEnd`. */
    tryIndex: number | undefined;
  },
  release: (c: Connection) => void,
): void {
  call.onEnd?.(tryIndex);
  if (extra.length === 0) {
    if (reusable) release(c);
    else c.close();
    return;
  }
  c.close();
  if (warning !== null) call.onBodyWarning(warning);
}

/**
 * The response body as a stream.
 *
 * @param c The connection the body comes on.
 * @param body Its framing and the bytes already read.
 * @param source Reads, pool and collections of the client.
 * @returns The stream; it errors with an {@linkcode UpstreamError}.
 */
export function streamBody(
  c: Connection,
  { call, watch, framing, rest, reusable }: StreamedBody,
  source: BodySource,
): ReadableStream<Uint8Array> {
  // Read now, while the send is this try's: the body's end comes later,
  // when the call may be on another try (UpstreamCall.onEnd).
  const tryIndex = call.tryIndex;
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
    call.onEnd?.(tryIndex);
    call.onBodyError(e);
    controller.error(e);
  };
  return new ReadableStream<Uint8Array>({
    // Reads until a piece for the client, the end or a failure: a pull that
    // enqueues nothing is not called again (`highWaterMark: 0` and the
    // client's one pending read), so a read that brought a chunk's size,
    // its CRLF or a trailer alone stalled the body with no read pending
    // and no timer to end it.
    pull: async (controller) => {
      while (!(await pullOnce(controller)));
    },
    cancel: () => {
      // The client went away mid-body: this connection is unusable.
      cancelled = true;
      c.close();
      call.onEnd?.(tryIndex);
    },
  }, { highWaterMark: 0 });

  /**
   * One read's part of a pull: `true` once the client was given a piece,
   * the stream ended or failed; `false` when the read held no body bytes.
   */
  async function pullOnce(
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<boolean> {
    let chunk: Uint8Array | null;
    if (first !== null) {
      chunk = first;
      first = null;
    } else {
      try {
        chunk = await source.read(c);
      } catch (error) {
        if (cancelled || watch.aborted) {
          c.close();
          call.onEnd?.(tryIndex);
          controller.error(UpstreamError.clientClosed(error));
          return true;
        }
        fail(
          controller,
          error instanceof TimerExpired
            ? upstreamTimeout("reading upstream", source.family)
            : upstreamErrorFromOs(error, "reading upstream", source.family),
        );
        return true;
      }
    }
    if (chunk === null) {
      if (framing.kind === "close") {
        c.close();
        call.onEnd?.(tryIndex);
        controller.close();
        return true;
      }
      fail(
        controller,
        new UpstreamError("upstream prematurely closed connection", {
          kind: "premature-close",
          action: "reading upstream",
        }),
      );
      return true;
    }
    // Each chunk holds a buffer of its own until Deno.serve has sent it.
    source.gcPacer.add(chunk.buffer.byteLength);
    if (decoder !== null) {
      let out;
      try {
        out = decoder.push(chunk);
      } catch (error) {
        if (!(error instanceof ChunkedFormatError)) throw error;
        fail(
          controller,
          new UpstreamError("upstream sent invalid chunked response", {
            kind: "invalid-response",
            action: "reading upstream",
          }),
        );
        return true;
      }
      // One chunk per read, as nginx's chunked filter writes one per
      // read: the client's framing (and `$body_bytes_sent`) match it.
      // Each read has its own buffer (readSome), so one piece needs no copy.
      if (out.data.length === 1) controller.enqueue(out.data[0]!);
      else if (out.data.length > 1) controller.enqueue(joined(out.data));
      if (decoder.done) {
        endOfAnswer(c, {
          extra: chunk.subarray(out.used),
          reusable,
          call,
          warning: AFTER_FINAL_CHUNK,
          tryIndex,
        }, source.release);
        controller.close();
        return true;
      }
      return out.data.length > 0;
    }
    const take = Math.min(left, chunk.length);
    controller.enqueue(chunk.subarray(0, take));
    left -= take;
    if (left === 0) {
      endOfAnswer(c, {
        extra: chunk.subarray(take),
        reusable,
        call,
        warning: MORE_THAN_LENGTH,
        tryIndex,
      }, source.release);
      controller.close();
    }
    return true;
  }
}

function joined(pieces: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of pieces) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
