/**
 * One `/api/` request forwarded: the request-body policy (nginx's
 * `client_max_body_size`), the upstream call, and the client's response.
 *
 * @module
 */

import { clientResponseHeaders, upstreamRequestHeaders } from "./headers.ts";
import type { UpstreamCall, UpstreamClient } from "./upstream_client.ts";
import { UpstreamError } from "./upstream_error.ts";

/** Bodies up to this size are read whole and sent with the head in one write. */
const SMALL_BODY = 64 * 1024;

/** Where and how to forward. */
export interface ProxyOptions {
  /** The upstream client (pool and timers). */
  client: UpstreamClient;
  /** The upstream origin, for `Location` rewriting. */
  origin: string;
  /** The `Host` sent upstream (nginx's `$proxy_host`). */
  upstreamHost: string;
  /** The path and query to request. */
  upstreamPath: string;
  /** The client's address, for `X-Forwarded-For`. */
  clientAddress: string;
  /** The gateway's absolute `/api/` URL, for `Location` rewriting. */
  publicApiBase: string;
  /** Add `X-Forwarded-*` headers. */
  addForwarded: boolean;
  /** nginx's `client_max_body_size` in bytes; 0 is unlimited. */
  maxBodySize: number;
  /** Told about failures after the response head went to the client. */
  onBodyError: (error: UpstreamError) => void;
}

/** The result of forwarding. */
export type ProxyResult =
  | { kind: "response"; response: Response }
  | { kind: "failed"; error: UpstreamError }
  | {
    /** The body is over `client_max_body_size`: 413, nothing forwarded. */
    kind: "too-large";
    /** nginx's message, e.g. `client intended to send too large body: 1048577 bytes`. */
    message: string;
  };

type BodyPlan =
  | { kind: "ready"; body: UpstreamCall["body"] }
  | { kind: "too-large"; message: string };

/** Reads a chunked body up to the limit, as nginx buffers it. */
async function bufferUpTo(
  stream: ReadableStream<Uint8Array>,
  limit: number,
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
        };
      }
      chunks.push(value);
      total += value.length;
    }
  } catch (error) {
    throw UpstreamError.clientClosed(error);
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { kind: "ready", body: { kind: "bytes", bytes } };
}

async function planBody(req: Request, maxBodySize: number): Promise<BodyPlan> {
  const declared = req.headers.get("content-length");
  const length = declared === null ? null : Number(declared);
  // Checked before a byte is read, so with `Expect: 100-continue` the client
  // gets the 413 instead of "100 Continue" and never uploads (nginx-observed §f).
  if (maxBodySize > 0 && length !== null && length > maxBodySize) {
    return {
      kind: "too-large",
      message: `client intended to send too large body: ${length} bytes`,
    };
  }
  if (req.body === null || length === 0) return { kind: "ready", body: null };
  if (length !== null && length <= SMALL_BODY) {
    try {
      return {
        kind: "ready",
        body: { kind: "bytes", bytes: new Uint8Array(await req.arrayBuffer()) },
      };
    } catch (error) {
      throw UpstreamError.clientClosed(error);
    }
  }
  if (length !== null) {
    return {
      kind: "ready",
      body: { kind: "stream", stream: req.body, length },
    };
  }
  if (maxBodySize > 0) return await bufferUpTo(req.body, maxBodySize);
  return {
    kind: "ready",
    body: { kind: "stream", stream: req.body, length: null },
  };
}

/**
 * Forwards a request to the upstream and returns the client's response.
 * Redirects are not followed: 3xx and their `Set-Cookie` go to the browser.
 *
 * @param req The client's request.
 * @param options Where and how to forward.
 * @returns The response, the failure, or the 413 verdict.
 */
export async function proxyRequest(
  req: Request,
  options: ProxyOptions,
): Promise<ProxyResult> {
  try {
    const plan = await planBody(req, options.maxBodySize);
    if (plan.kind === "too-large") return plan;
    const reply = await options.client.send({
      method: req.method,
      path: options.upstreamPath,
      host: options.upstreamHost,
      headers: upstreamRequestHeaders(req.headers, {
        clientAddress: options.clientAddress,
        addForwarded: options.addForwarded,
      }),
      body: plan.body,
      signal: req.signal,
      onBodyError: options.onBodyError,
    });
    const { head } = reply;
    if (head.status < 200) {
      // 101 Switching Protocols needs a tunnel, which is not built yet.
      await cancel(reply.body);
      return {
        kind: "failed",
        error: new UpstreamError(
          `upstream sent unexpected status ${head.status}`,
          {
            kind: "invalid-response",
            action: "reading response header from upstream",
          },
        ),
      };
    }
    let upstreamHeaders: Headers;
    try {
      upstreamHeaders = new Headers(head.fields);
    } catch {
      await cancel(reply.body);
      return {
        kind: "failed",
        error: new UpstreamError("upstream sent invalid header", {
          kind: "invalid-response",
          action: "reading response header from upstream",
        }),
      };
    }
    const headers = clientResponseHeaders(upstreamHeaders, {
      upstreamOrigin: options.origin,
      publicApiBase: options.publicApiBase,
    });
    if (reply.length !== null) {
      headers.set("content-length", String(reply.length));
    }
    return {
      kind: "response",
      response: new Response(reply.body, {
        status: head.status,
        statusText: head.reason,
        headers,
      }),
    };
  } catch (error) {
    if (error instanceof UpstreamError) return { kind: "failed", error };
    throw error;
  }
}

async function cancel(body: Uint8Array | ReadableStream<Uint8Array> | null) {
  if (body instanceof ReadableStream) await body.cancel();
}
