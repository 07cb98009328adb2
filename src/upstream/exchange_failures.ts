/**
 * What a failure of an exchange with the upstream means, before the
 * response head arrived: a timeout, the client gone, the OS's error, or a
 * head nginx refuses; and whether a kept connection was stale, so that
 * `client.ts` may resend an idempotent request on a new one.
 *
 * @module
 */

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
import { InvalidResponseError } from "./field_line_parser.ts";

/**
 * What a failed request write means: timeout, client gone, or OS error.
 *
 * @param c The connection written to.
 * @param failed `watch`: the client's; `error`: what the write threw;
 * `family`: the OS family its errors are named for; `streamed`: the body
 * is the client's, read as it is sent.
 * @returns The failure to throw.
 */
export function sendFailure(
  c: Connection,
  { watch, error, family, streamed }: {
    watch: ClientWatch;
    error: unknown;
    family: OsFamily;
    streamed: boolean;
  },
): unknown {
  if (error instanceof UpstreamError) return error;
  if (error instanceof TimerExpired) {
    return upstreamTimeout("sending request to upstream", family);
  }
  if (watch.aborted) {
    // While the client's own body is streamed, nginx reads that body and
    // sees the close there, not as a broken connection.
    return streamed
      ? UpstreamError.clientBodyClosed(error)
      : UpstreamError.clientClosed(error);
  }
  return markStale(
    c,
    upstreamErrorFromOs(error, "sending request to upstream", family),
  );
}

/**
 * What a failed read of the response head means.
 *
 * @param c The connection read from.
 * @param failed `watch`: the client's; `error`: what the read threw; `got`:
 * the head's bytes read before; `family`: the OS family.
 * @returns The failure to throw.
 */
export function readFailure(
  c: Connection,
  { watch, error, got, family }: {
    watch: ClientWatch;
    error: unknown;
    got: number;
    family: OsFamily;
  },
): UpstreamError {
  if (error instanceof TimerExpired) {
    return upstreamTimeout("reading response header from upstream", family);
  }
  if (watch.aborted) return UpstreamError.clientClosed(error);
  const e = upstreamErrorFromOs(
    error,
    "reading response header from upstream",
    family,
  );
  return got === 0 ? markStale(c, e) : e;
}

/**
 * The upstream closed before a whole head: stale if it sent nothing.
 *
 * @param c The connection.
 * @param got The head's bytes read before the close.
 * @returns The failure to throw.
 */
export function closedEarly(c: Connection, got: number): UpstreamError {
  const e = new UpstreamError("upstream prematurely closed connection", {
    kind: "premature-close",
    action: "reading response header from upstream",
  });
  return got === 0 ? markStale(c, e) : e;
}

/** A failure before any byte on a kept connection: it may have been stale. */
function markStale(c: Connection, error: UpstreamError): UpstreamError {
  if (c.reused) error.stale = true;
  return error;
}

/**
 * A head the parser refused is nginx's invalid response; others pass as
 * they are.
 *
 * @param error What the exchange threw.
 * @returns The failure to throw.
 */
export function asUpstreamError(error: unknown): unknown {
  if (error instanceof InvalidResponseError) {
    return new UpstreamError(error.message, {
      kind: "invalid-response",
      action: "reading response header from upstream",
    });
  }
  return error;
}
