/**
 * The reply read up to its CGI head, as `ngx_http_upstream_process_header`
 * reads: into one buffer of `fastcgi_buffer_size`, records and all, until
 * the head is whole (`cgi_head.ts`); a head that does not fit is `upstream
 * sent too big header`. `STDERR` before any `STDOUT` is logged, and a read
 * that ends in it gives its room back, as nginx does for PHP's warnings;
 * padding and empty records do not. The body follows as a stream
 * (`reply_body.ts`).
 *
 * @module
 */

import {
  InvalidResponseError,
  type ResponseHead,
  type UpstreamCall,
  UpstreamError,
  type UpstreamReply,
} from "../upstream/mod.ts";
import { parseCgiHead } from "./cgi_head.ts";
import { RecordDecoder, type RecordEvent } from "./record_decoder.ts";
import { replyBody } from "./reply_body.ts";
import type { TimedConn } from "./timed_conn.ts";

const HEADER = "reading response header from upstream";

/** Logs one `STDERR` piece with its phase and the server. */
export type StderrLog = (
  bytes: Uint8Array,
  action: "reading response header from upstream" | "reading upstream",
  peer: string,
) => void;

function invalid(message: string): UpstreamError {
  return new UpstreamError(message, {
    kind: "invalid-response",
    action: HEADER,
  });
}

/**
 * Reads the reply up to its CGI head, within the head buffer.
 *
 * @param conn The connection, the request sent.
 * @param call The call (`onBodyError`, `onBodyWarning` for the body).
 * @param options The `STDERR` log, the server, `fastcgi_buffer_size`.
 * @returns The head and the body's stream.
 * @throws {UpstreamError} nginx's failure for the head.
 */
export async function readReply(
  conn: TimedConn,
  call: UpstreamCall,
  { onStderr, peer, bufferSize }: {
    onStderr: StderrLog;
    peer: string;
    bufferSize: number;
  },
): Promise<UpstreamReply> {
  const buffer = new Uint8Array(bufferSize);
  const decoder = new RecordDecoder();
  const events: RecordEvent[] = [];
  let used = 0;
  // STDOUT content so far (at most the buffer: records carry it).
  let stdout: Uint8Array = new Uint8Array(0);
  let searched = 0;
  while (true) {
    if (used === buffer.length) throw invalid("upstream sent too big header");
    const n = await conn.read(buffer.subarray(used), HEADER);
    if (n === null) {
      throw new UpstreamError("upstream prematurely closed connection", {
        kind: "premature-close",
        action: HEADER,
      });
    }
    events.length = 0;
    decoder.push(buffer.subarray(used, used + n), events);
    used += n;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      if (event.kind === "stderr") {
        onStderr(event.bytes, HEADER, peer);
        continue;
      }
      if (event.kind === "error") throw invalid(event.message);
      if (event.kind === "end") {
        throw invalid("upstream sent unexpected FastCGI record: 3");
      }
      if (event.kind === "stdout-end") {
        throw invalid("upstream prematurely closed FastCGI stdout");
      }
      stdout = joined(stdout, event.bytes);
      let head: ResponseHead | null;
      try {
        head = parseCgiHead(stdout, searched);
      } catch (error) {
        if (error instanceof InvalidResponseError) throw invalid(error.message);
        throw error;
      }
      searched = stdout.length;
      if (head === null) continue;
      // The rest of this read follows the head: its STDOUT first.
      const first: RecordEvent[] = [];
      if (head.headLength < stdout.length) {
        first.push({ kind: "stdout", bytes: stdout.subarray(head.headLength) });
      }
      first.push(...events.slice(i + 1));
      // The last of several, as nginx 1.22's content-length handler keeps
      // the last it was handed (ngx_http_upstream_process_content_length).
      const lengthField = head.fields.findLast(([name]) =>
        name.toLowerCase() === "content-length"
      )?.[1];
      const length = lengthField !== undefined && /^\d{1,15}$/.test(lengthField)
        ? Number(lengthField)
        : null;
      return {
        head,
        length,
        body: replyBody(conn, {
          decoder,
          first,
          length,
          call,
          onStderr: (bytes, action) => onStderr(bytes, action, peer),
        }),
      };
    }
    // A read that ends in STDERR content before any STDOUT gives its room
    // back, as nginx does so that many PHP warnings before the head take
    // no memory; padding and record headers do not (an endless stream of
    // them is a head that never ends).
    const last = events[events.length - 1];
    if (
      stdout.length === 0 && last?.kind === "stderr" &&
      last.bytes.byteOffset + last.bytes.length === used
    ) {
      used = 0;
    }
  }
}

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
