/**
 * The reply's body after its CGI head, as `ngx_http_fastcgi_input_filter`
 * passes it on with `fastcgi_keep_conn off`: `STDOUT` content goes to the
 * client, `STDERR` to the log, the end of `STDOUT` or the `END_REQUEST`
 * ends the body (short of a `Content-Length` the head declared: `upstream
 * prematurely closed FastCGI stdout` / `… request`), bytes past that
 * length are dropped with nginx's warning, and the connection closing ends
 * the body as nginx's pipe does without `keep_conn`. One read at a time, each
 * into a buffer of its own, pulled as the client takes the body.
 *
 * @module
 */

import { type UpstreamCall, UpstreamError } from "../upstream/mod.ts";
import { RecordDecoder, type RecordEvent } from "./record_decoder.ts";
import type { TimedConn } from "./timed_conn.ts";

/** Bytes per read of the body (nginx reads into `fastcgi_buffers`). */
const READ_SIZE = 16 * 1024;

const MORE_THAN_LENGTH =
  'upstream sent more data than specified in "Content-Length" header';

/** What the body stream needs besides the connection. */
export interface BodySource {
  /** The records' decoder, past the head. */
  decoder: RecordDecoder;
  /** The pieces decoded with the head's last read, after the head. */
  first: RecordEvent[];
  /** The head's `Content-Length`, or `null`. */
  length: number | null;
  /** The call: `onBodyError`, `onBodyWarning`. */
  call: UpstreamCall;
  /** Logs one `STDERR` piece with its phase. */
  onStderr: (bytes: Uint8Array, action: "reading upstream") => void;
}

/**
 * The body as a stream that errors with an {@linkcode UpstreamError}
 * (after telling the call) when the application breaks it off.
 *
 * @param conn The connection; closed when the body ends.
 * @param source The decoder, the pieces already read and the hooks.
 * @returns The stream.
 */
export function replyBody(
  conn: TimedConn,
  source: BodySource,
): ReadableStream<Uint8Array> {
  const { decoder, call } = source;
  let rest = source.length ?? -1;
  let pending: RecordEvent[] | null = source.first;
  let cancelled = false;
  const events: RecordEvent[] = [];
  const fail = (
    controller: ReadableStreamDefaultController<Uint8Array>,
    error: UpstreamError,
  ) => {
    conn.close();
    if (error.kind !== "client-closed") call.onBodyError(error);
    controller.error(error);
  };
  const invalid = (message: string) =>
    new UpstreamError(message, {
      kind: "invalid-response",
      action: "reading upstream",
    });
  /** Hands the pieces on; `true` once the body has ended. */
  const handle = (
    list: RecordEvent[],
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): boolean => {
    for (let i = 0; i < list.length; i++) {
      const event = list[i]!;
      switch (event.kind) {
        case "stdout": {
          let bytes = event.bytes;
          if (rest === 0 || (rest > 0 && bytes.length > rest)) {
            bytes = bytes.subarray(0, Math.max(rest, 0));
            if (bytes.length > 0) controller.enqueue(bytes);
            call.onBodyWarning(MORE_THAN_LENGTH);
            conn.close();
            controller.close();
            return true;
          }
          if (rest > 0) rest -= bytes.length;
          if (bytes.length > 0) controller.enqueue(bytes);
          break;
        }
        case "stderr":
          source.onStderr(event.bytes, "reading upstream");
          break;
        case "stdout-end":
        case "end":
          if (rest > 0) {
            fail(
              controller,
              invalid(
                event.kind === "end"
                  ? "upstream prematurely closed FastCGI request"
                  : "upstream prematurely closed FastCGI stdout",
              ),
            );
            return true;
          }
          conn.close();
          controller.close();
          return true;
        case "error":
          fail(controller, invalid(event.message));
          return true;
      }
    }
    return false;
  };
  return new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      if (pending !== null) {
        const list = pending;
        pending = null;
        if (handle(list, controller) || list.some((e) => e.kind === "stdout")) {
          return;
        }
      }
      // Reads until a piece for the client or the end: STDERR alone and
      // padding give the client nothing to wait on.
      while (true) {
        const into = new Uint8Array(READ_SIZE);
        let n: number | null;
        try {
          n = await conn.read(into, "reading upstream");
        } catch (error) {
          if (cancelled) return;
          return fail(
            controller,
            error instanceof UpstreamError
              ? error
              : UpstreamError.clientClosed(error),
          );
        }
        if (n === null) {
          // Without fastcgi_keep_conn the connection's end is the body's
          // (ngx_http_upstream_process_request, p->length == -1).
          conn.close();
          controller.close();
          return;
        }
        events.length = 0;
        decoder.push(into.subarray(0, n), events);
        if (handle(events, controller)) return;
        if (events.some((e) => e.kind === "stdout")) return;
      }
    },
    cancel: () => {
      cancelled = true;
      conn.close();
    },
  }, { highWaterMark: 0 });
}
