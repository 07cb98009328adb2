/**
 * A chunked body nothing read, discarded as nginx discards it once it
 * answered (ngx_http_discard_request_body), for the `$content_length` an
 * access line then reads: only when a line reads it.
 *
 * Where it differs from nginx (README, discarded-body-length): nginx's
 * figure for a body cut short is what its chunk parser still wanted, at
 * least a `large_client_header_buffers` buffer, so more than 8192 for a cut
 * inside a chunk over 8 KiB or with larger buffers; the wait is nginx's
 * default `lingering_timeout`, not the configured one; and the body is read
 * once the exchange is over, when a body whose end came after the answer
 * can no longer be read (Deno.serve has read it for the next request), so
 * it counts as cut where nginx logs 0.
 *
 * @module
 */

/**
 * nginx's `lingering_timeout` default: how long a discarded body's next
 * bytes are waited for (ngx_http_discarded_request_body_handler).
 */
const LINGERING_TIMEOUT_MS = 5000;
/** nginx's `lingering_time` default: how long a body is discarded at most. */
const LINGERING_TIME_MS = 30_000;
/**
 * What nginx's `$content_length` holds of a chunked body discarded before
 * its end: the bytes its parser wants next, at least a large header
 * buffer (ngx_http_discard_request_body_filter: `ngx_max(rb->chunked->length,
 * large_client_header_buffers.size)`), 8k by default.
 */
export const DISCARD_WANTS = 8192;

/**
 * Reads a discarded chunked body to its end, as nginx's discarding does
 * once it answered: 0 when it ended (ngx_http_discard_request_body_filter
 * sets `content_length_n` to 0), else what nginx's parser still wanted
 * ({@linkcode DISCARD_WANTS}): the client left, or sent nothing for
 * `lingering_timeout`, or kept sending past `lingering_time`.
 *
 * @param body The request's body, taken before the exchange ended.
 * @returns The `$content_length` nginx has for it then.
 *
 * @example Usage
 * ```ts
 * import { discardedLength } from "./discarded_body.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(await discardedLength(new Blob(["abc"]).stream()), 0);
 * ```
 */
export async function discardedLength(
  body: ReadableStream<Uint8Array> | null,
): Promise<number> {
  if (body === null) return 0;
  const reader = body.getReader();
  const end = Date.now() + LINGERING_TIME_MS;
  try {
    // Bounded by lingering_time, each wait by lingering_timeout.
    while (Date.now() < end) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const quiet = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), LINGERING_TIMEOUT_MS);
      });
      const read = await Promise.race([reader.read(), quiet]).finally(() =>
        clearTimeout(timer)
      );
      if (read === null) break;
      if (read.done) return 0;
    }
  } catch {
    // The client left.
  }
  reader.cancel().catch(() => {});
  return DISCARD_WANTS;
}
