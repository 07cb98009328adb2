/**
 * One `/api/` request forwarded: the request-body policy (nginx's
 * `client_max_body_size`), the upstream call, and the client's response.
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import { streamedResponse } from "../static/mod.ts";
import { type BodyDecision, bufferUpTo, planBody } from "./body_plan.ts";
import { type BodyDeadlines, readRequestBody } from "./request_buffer.ts";
import type { TempFiles } from "./temp_files.ts";
import { clientResponseHeaders, upstreamRequestHeaders } from "./headers.ts";
import type { UpstreamCall, UpstreamReply } from "../upstream/mod.ts";
import { UpstreamError } from "../upstream/mod.ts";
import type { UpstreamGroup, UpstreamPeer } from "../upstream/mod.ts";
import {
  type AttemptFailure,
  NO_FAILURES,
  tryPeers,
  upstreamField,
} from "../upstream/mod.ts";

/** Where and how to forward: the settings it reads, and the request's part. */
export interface ProxyOptions
  extends Pick<GatewayConfig, "addForwardedHeaders" | "clientMaxBodySize"> {
  /** The upstream servers. */
  group: UpstreamGroup;
  /** The path and query to request. */
  upstreamPath: string;
  /** The client's address, for `X-Forwarded-For`. */
  clientAddress: string;
  /** The gateway's absolute `/api/` URL, for `Location` rewriting. */
  publicApiBase: string;
  /**
   * The declared `Content-Length`, from the gateway's one parse of it
   * (`parseContentLength`); `null` when there is none.
   */
  contentLength: number | null;
  /**
   * Told about every failed attempt as it fails, with the `upstream:`
   * field: those before the answer, and one after the response went out
   * (its body broke off).
   */
  onFailure: (failure: AttemptFailure) => void;
  /**
   * A location's fields (`set_headers.ts`), sent instead of the gateway's
   * own policy (`upstreamRequestHeaders`).
   */
  headers?: readonly (readonly [string, string])[];
  /** A location's call settings: version, leading fields, timers, limits. */
  call?: LocationCall;
  /** Turns a reply into the response instead of {@linkcode replyToResponse}. */
  toResponse?: (reply: UpstreamReply, peer: UpstreamPeer) => Response;
  /**
   * nginx's `proxy_request_buffering on`: read the whole body first
   * (`request_buffer.ts`); `null` or absent streams it as it arrives.
   */
  buffering?: RequestBuffering | null;
}

/** How a body is read whole before forwarding. */
export interface RequestBuffering {
  /** `client_body_buffer_size`. */
  bufferSize: number;
  /** `client_body_timeout` in milliseconds. */
  timeoutMs: number;
  /** The `client_body_temp_path` folder. */
  temp: TempFiles;
  /** Told the path of a file a body went to (nginx's `[warn]` line). */
  onTempFile: (path: string) => void;
  /** The timers of the bodies being read, made once. */
  deadlines?: BodyDeadlines;
}

/** The call settings a proxied location brings. */
export type LocationCall = Pick<
  UpstreamCall,
  "version" | "leading" | "timeouts" | "headBufferSize" | "keepalive"
>;

/**
 * The result of forwarding, with the failed attempts before it (each a line
 * for the error log, in order).
 */
export type ProxyResult =
  & { failures: readonly AttemptFailure[] }
  & ProxyEnd;

/** How forwarding ended. */
type ProxyEnd =
  | { kind: "response"; response: Response }
  | {
    /** Every attempt failed. */
    kind: "failed";
    /** The last failure, which decides the status. */
    error: UpstreamError;
  }
  | {
    /** No server was available: nginx's "no live upstreams". */
    kind: "no-live";
  }
  | {
    /**
     * The client left while its body was being read, before any server was
     * chosen: nothing was forwarded.
     */
    kind: "client-left";
    /** The failure, as a client-closed error. */
    error: UpstreamError;
  }
  | {
    /**
     * The body's chunked framing is invalid: nginx's 400 `client sent
     * invalid chunked body`, nothing forwarded.
     */
    kind: "bad-body";
  }
  | {
    /** The body is over `client_max_body_size`: 413, nothing forwarded. */
    kind: "too-large";
    /** nginx's message, e.g. `client intended to send too large chunked body: 1048384+65524 bytes`. */
    message: string;
  }
  | {
    /** `client_body_timeout` passed while the body was read: 408. */
    kind: "body-timeout";
  }
  | {
    /** A temporary file for the body failed: nginx's 500 and `[crit]`. */
    kind: "temp-failed";
    /** nginx's message, e.g. `open() "/x/0000000001" failed`. */
    message: string;
    error: unknown;
  }
  | {
    /** A bug, to be thrown once the attempts before it are logged. */
    kind: "defect";
    error: unknown;
  };

/**
 * Why reading the client's body failed. Deno's HTTP/1 decoder rejects bad
 * chunked framing with `invalid HTTP/1 request: …` (a plain `Error`); a
 * client that went away surfaces as `BadResource`. nginx answers the first
 * with 400 (`ngx_http_parse_chunked` → NGX_HTTP_BAD_REQUEST).
 */
function bodyReadFailed(error: unknown): ProxyResult {
  const cause = error instanceof UpstreamError ? error.cause : error;
  if (
    cause instanceof Error && !(cause instanceof Deno.errors.BadResource) &&
    cause.message.startsWith("invalid HTTP/1 request")
  ) {
    return { kind: "bad-body", failures: NO_FAILURES };
  }
  return {
    kind: "client-left",
    error: error instanceof UpstreamError
      ? error
      : UpstreamError.clientClosed(error),
    failures: NO_FAILURES,
  };
}

function toResponse(
  reply: UpstreamReply,
  peer: UpstreamPeer,
  publicApiBase: string,
): Response {
  const { head } = reply;
  const headers = clientResponseHeaders(head.fields, {
    upstreamOrigin: peer.spec.address.origin,
    publicApiBase,
    contentLength: reply.length,
  });
  // No statusText: Deno.serve writes its own reason phrase whatever is
  // given, and a given one is checked by a regular expression first.
  return streamedResponse(reply.body, { status: head.status, headers });
}

function invalid(message: string): UpstreamError {
  return new UpstreamError(message, {
    kind: "invalid-response",
    action: "reading response header from upstream",
  });
}

/**
 * Forwards a request to the upstream group and returns the client's
 * response. Redirects are not followed: 3xx and their `Set-Cookie` go to the
 * browser. A failed attempt moves to the next server when nginx would
 * ({@linkcode shouldTryNext}); nothing has reached the client by then.
 *
 * @param req The client's request.
 * @param options Where and how to forward.
 * @returns The response, the failure, "no live upstreams", the 413 verdict,
 * or the client leaving while its body was read.
 */
export async function proxyRequest(
  req: Request,
  options: ProxyOptions,
): Promise<ProxyResult> {
  let plan: BodyDecision = planBody(
    req,
    options.contentLength,
    options.clientMaxBodySize,
  );
  const hasBody = !(plan.kind === "ready" && plan.body === null);
  if (options.buffering && hasBody && req.body !== null) {
    const read = await readRequestBody(req.body, {
      length: options.contentLength,
      limit: options.clientMaxBodySize,
      ...options.buffering,
    });
    switch (read.kind) {
      case "ready":
        try {
          return await forward(req, options, read.body);
        } finally {
          read.temp?.close();
        }
      case "too-large":
        return { ...read, failures: NO_FAILURES };
      case "timeout":
        return { kind: "body-timeout", failures: NO_FAILURES };
      case "read-failed":
        return bodyReadFailed(read.error);
      case "temp-failed":
        return {
          kind: "temp-failed",
          message: read.opened
            ? `write() to "${read.path}" failed`
            : `open() "${read.path}" failed`,
          error: read.error,
          failures: NO_FAILURES,
        };
    }
  }
  if (plan.kind === "read") {
    try {
      const bytes = new Uint8Array(await req.arrayBuffer());
      plan = { kind: "ready", body: { kind: "bytes", bytes } };
    } catch (error) {
      return bodyReadFailed(error);
    }
  } else if (plan.kind === "buffer") {
    try {
      plan = await bufferUpTo(plan.stream, plan.limit, plan.emptyIsNone);
    } catch (error) {
      if (error instanceof UpstreamError) return bodyReadFailed(error);
      throw error;
    }
  }
  if (plan.kind === "too-large") {
    return { kind: "too-large", message: plan.message, failures: NO_FAILURES };
  }
  return forward(req, options, plan.body);
}

/** Sends the request, with its body as read, to the group's servers. */
async function forward(
  req: Request,
  options: ProxyOptions,
  body: UpstreamCall["body"],
): Promise<ProxyResult> {
  const headers = options.headers ??
    upstreamRequestHeaders(req.headers, {
      clientAddress: options.clientAddress,
      addForwardedHeaders: options.addForwardedHeaders,
    });
  const toClient = options.toResponse ??
    ((reply: UpstreamReply, peer: UpstreamPeer) =>
      replyToResponse(reply, peer, options.publicApiBase));
  const outcome = await tryPeers(options.group, {
    method: req.method,
    upstreamPath: options.upstreamPath,
    streamedBody: body?.kind === "stream",
    onFailure: options.onFailure,
  }, (peer) =>
    peer.client.send({
      method: req.method,
      path: options.upstreamPath,
      host: peer.spec.address.origin.slice("http://".length),
      headers,
      body,
      ...options.call,
      // Read only if the exchange outlasts a watchdog period (see UpstreamCall).
      signal: () => req.signal,
      onBodyError: (error) =>
        options.onFailure({
          error,
          upstream: upstreamField(peer, options.upstreamPath),
          disabled: false,
        }),
    }), toClient);
  return outcome.kind === "ok"
    ? { kind: "response", response: outcome.value, failures: outcome.failures }
    : outcome;
}

/**
 * Turns an upstream reply into the client's response (headers filtered,
 * `Location` rewritten for that server).
 *
 * @param reply The upstream's reply.
 * @param peer The server that sent it.
 * @param publicApiBase The gateway's absolute `/api/` URL.
 * @returns The response.
 * @throws {UpstreamError} On a reply that cannot be relayed.
 */
export function replyToResponse(
  reply: UpstreamReply,
  peer: UpstreamPeer,
  publicApiBase: string,
): Response {
  if (reply.head.status < 200) {
    discard(reply);
    throw invalid(`upstream sent unexpected status ${reply.head.status}`);
  }
  try {
    return toResponse(reply, peer, publicApiBase);
  } catch {
    discard(reply);
    throw invalid("upstream sent invalid header");
  }
}

/**
 * Cancels a reply's streamed body, which closes its connection. Not awaited:
 * the verdict does not wait on the socket, and a failed cancel has nothing
 * left to clean up.
 */
function discard(reply: UpstreamReply): void {
  if (reply.body instanceof ReadableStream) {
    reply.body.cancel().catch(() => {});
  }
}
