/**
 * The request body's policy, decided from the headers alone: none, read
 * whole (small, with a length), streamed, or buffered up to nginx's
 * `client_max_body_size` when it has no declared length.
 *
 * @module
 */

import type { UpstreamCall } from "../upstream/mod.ts";
import { UpstreamError } from "../upstream/mod.ts";

/** Bodies up to this size are read whole and sent with the head in one write. */
const SMALL_BODY = 64 * 1024;

/** A body ready to send (or none), or nginx's 413 verdict. */
export type BodyPlan =
  | { kind: "ready"; body: UpstreamCall["body"] }
  | {
    kind: "too-large";
    message: string;
    /** The body bytes read before the piece past the limit. */
    received?: number;
  };

/** What to do with the request body, decided from the headers alone. */
export type BodyDecision =
  | BodyPlan
  /** Read it whole (small, with a length): sent with the head in one write. */
  | { kind: "read" }
  /** Buffer a chunked body up to `client_max_body_size`. */
  | {
    kind: "buffer";
    stream: ReadableStream<Uint8Array>;
    limit: number;
    /** An empty body is sent as none (no framing field at all). */
    emptyIsNone?: boolean;
  };

/** Reads a chunked body up to the limit, as nginx buffers it. */
export async function bufferUpTo(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  emptyIsNone = false,
): Promise<BodyPlan> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.length > limit) {
        await reader.cancel();
        return {
          kind: "too-large",
          message:
            `client intended to send too large chunked body: ${total}+${value.length} bytes`,
          received: total,
        };
      }
      chunks.push(value);
      total += value.length;
    }
  } catch (error) {
    throw UpstreamError.clientClosed(error, total);
  } finally {
    reader.releaseLock();
  }
  if (total === 0 && emptyIsNone) return { kind: "ready", body: null };
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { kind: "ready", body: { kind: "bytes", bytes } };
}

/** The decision for a small declared body, made once. */
const READ: BodyDecision = Object.freeze({ kind: "read" });

/**
 * What to do with a request's body, from its headers and declared length.
 * Not async: the body is read by the caller, so a request costs one async
 * layer fewer (each is a frame and promises of garbage per request). Only a
 * body without a declared length is checked against the limit here: the
 * gateway answers 413 to a declared one before routing.
 *
 * @param req The client's request.
 * @param length The declared `Content-Length`, or `null`.
 * @param clientMaxBodySize The limit in bytes; 0 is unlimited.
 * @returns The decision.
 */
export function planBody(
  req: Request,
  length: number | null,
  clientMaxBodySize: number,
): BodyDecision {
  if (length === 0) return { kind: "ready", body: null };
  if (length === null && !req.headers.has("transfer-encoding")) {
    // Without either field an HTTP/1.1 request has no body (RFC 9112 §6.3),
    // and a GET or HEAD never has one here (Deno.serve gives it none).
    // Decided from the headers: the `req.body` getter builds a stream even
    // to say null, a cost on every request.
    if (req.method === "GET" || req.method === "HEAD") {
      return { kind: "ready", body: null };
    }
    // Other methods are looked at: HTTP/2 frames a body without either
    // field, and one that reaches here (a client sending Host as well as
    // :authority) must not lose it. An empty body is no body.
    if (req.body === null) return { kind: "ready", body: null };
    if (clientMaxBodySize > 0) {
      return {
        kind: "buffer",
        stream: req.body,
        limit: clientMaxBodySize,
        emptyIsNone: true,
      };
    }
    return {
      kind: "ready",
      body: { kind: "stream", stream: req.body, length: null },
    };
  }
  if (length !== null && length <= SMALL_BODY) return READ;
  if (req.body === null) return { kind: "ready", body: null };
  if (length !== null) {
    return {
      kind: "ready",
      body: { kind: "stream", stream: req.body, length },
    };
  }
  if (clientMaxBodySize > 0) {
    return { kind: "buffer", stream: req.body, limit: clientMaxBodySize };
  }
  return {
    kind: "ready",
    body: { kind: "stream", stream: req.body, length: null },
  };
}
