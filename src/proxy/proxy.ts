/**
 * One proxied request sent to its upstream group: the request body read
 * as nginx's `client_max_body_size` and `proxy_request_buffering` say
 * (`body_plan.ts`, `request_buffer.ts`), then the walk over the group's
 * servers with the location's fields and call settings; the reply is
 * turned into the client's response by the location (`location_reply.ts`).
 *
 * @module
 */

import { type BodyDecision, planBody } from "./body_plan.ts";
import {
  type BodyReadResult,
  fitsInMemory,
  readRequestBody,
  readWholeBody,
} from "./request_buffer.ts";
import { StreamedRead } from "./chunk_source.ts";
import type {
  BodyTimeout,
  ProxyOptions,
  ProxyResult,
} from "./proxy_options.ts";
import { unsafeAccelMessage } from "./accel_redirect.ts";
import { STREAMED } from "./kept_body.ts";
import type { UpstreamTries } from "../log/mod.ts";
import type {
  AttemptFailure,
  DroppedAnswer,
  NextUpstream,
  PeerWalk,
  UpstreamCall,
  UpstreamPeer,
  UpstreamReply,
  UpstreamTimeouts,
} from "../upstream/mod.ts";
import { DEFAULT_NEXT_UPSTREAM, UpstreamError } from "../upstream/mod.ts";
import {
  type PeerOutcome,
  upstreamField,
  upstreamStatus,
  walkPeers,
} from "../upstream/mod.ts";

/**
 * No bytes, sent as `Content-Length: 0`: a refused body's stand-in for a
 * page, an empty chunked body read.
 */
const EMPTY = Object.freeze({
  kind: "bytes" as const,
  bytes: new Uint8Array(0),
});

/** nginx's `client_body_timeout` default, for options that name none. */
const NGINX_BODY_TIMEOUT: BodyTimeout = Object.freeze({ timeoutMs: 60_000 });

/** `client_body_timeout` passed while the body was read or streamed. */
const BODY_TIMEOUT: ProxyResult = Object.freeze({ kind: "body-timeout" });

/**
 * Why reading the client's body failed. Deno's HTTP/1 decoder rejects bad
 * chunked framing with `invalid HTTP/1 request: …` (a plain `Error`); a
 * client that went away surfaces as `BadResource`. nginx answers the first
 * with 400 (`ngx_http_parse_chunked` → NGX_HTTP_BAD_REQUEST).
 */
function bodyReadFailed(
  error: unknown,
  options: ProxyOptions,
  received?: number,
): ProxyResult {
  // What came before counts (`$request_length`, a chunked body's
  // `$content_length`), as nginx counts each byte it read.
  const read = received ??
    (error instanceof UpstreamError ? error.bodyReceived : null);
  if (read !== null && read !== undefined) {
    options.keeper?.bodyRead?.(read, options.readsUnbuffered);
  }
  const cause = error instanceof UpstreamError ? error.cause : error;
  if (
    cause instanceof Error && !(cause instanceof Deno.errors.BadResource) &&
    cause.message.startsWith("invalid HTTP/1 request")
  ) {
    return { kind: "bad-body" };
  }
  return {
    kind: "client-left",
    error: error instanceof UpstreamError
      ? error
      : UpstreamError.clientClosed(error),
  };
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
export function proxyRequest(
  req: Request,
  options: ProxyOptions,
): Promise<ProxyResult> {
  // Not async: a body read in one call and its forwarding are chained, so
  // no frame of this function stays suspended while the upstream answers.
  // A throw is still a rejection, as the callers expect.
  try {
    const source = options.bodyOf ?? req;
    if (options.bodyOf !== undefined && source.bodyUsed) {
      // A redirect (an error page, an X-Accel-Redirect) after a location
      // that read the body: what it kept.
      const kept = options.keeper?.keptBody;
      if (kept === STREAMED) {
        // A target that sends no body (`fastcgi_pass_request_body off`)
        // misses nothing: nginx answers it, its length still the client's.
        if (options.sendsBody === false) return forward(req, options, null);
        return Promise.resolve({ kind: "body-not-kept" } as const);
      }
      // None kept: the body was refused or its reading failed. nginx
      // discards it (ngx_http_discard_request_body), and the page gets
      // `Content-Length: 0`.
      return forward(
        req,
        options,
        kept === undefined
          ? EMPTY
          : kept === null
          ? null
          : kept instanceof Uint8Array
          ? { kind: "bytes", bytes: kept }
          : kept.body,
      );
    }
    const plan = planBody(
      source,
      options.contentLength,
      options.clientMaxBodySize,
    );
    if (plan.kind === "ready" && plan.body === null) {
      return forward(req, options, null);
    }
    // A small declared body in one call (a GET or HEAD with one was refused
    // before: their body is `null`), any other through its stream; each
    // under client_body_timeout, read first or streamed. Every one through
    // its stream when a line counts the bytes of a body cut short.
    const buffering = options.buffering;
    if (
      options.countsBody !== true &&
      (buffering
        ? fitsInMemory(options.contentLength, buffering.bufferSize)
        : plan.kind === "read")
    ) {
      return readWholeBody(
        source,
        buffering ?? options.bodyTimeout ?? NGINX_BODY_TIMEOUT,
      ).then((read) => forwardRead(req, options, read));
    }
    return readAndForward(req, options, plan);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A body of no declared size, or one over the buffer: read, then sent. */
async function readAndForward(
  req: Request,
  options: ProxyOptions,
  plan: BodyDecision,
): Promise<ProxyResult> {
  const buffering = options.buffering;
  const source = options.bodyOf ?? req;
  if (buffering && source.body !== null) {
    const read = await readRequestBody(source.body, {
      length: options.contentLength,
      limit: options.clientMaxBodySize,
      ...buffering,
      // nginx's line (ngx_write_chain_to_temp_file via tf->warn).
      onTempFile: (path) =>
        options.log?.({
          level: "warn",
          message:
            `a client request body is buffered to a temporary file ${path}`,
        }),
    });
    return forwardRead(req, options, read);
  }
  const timeout = options.bodyTimeout ?? NGINX_BODY_TIMEOUT;
  if (plan.kind === "read") {
    // Counted (a line names `$request_length`): through its stream, which
    // counts the bytes of a body cut short; its length is declared and small.
    plan = source.body === null
      ? { kind: "ready", body: null }
      : { kind: "buffer", stream: source.body, limit: Infinity };
  }
  if (plan.kind === "buffer") {
    // Read ahead in memory (README, chunked uploads), up to the limit.
    const read = await readRequestBody(plan.stream, {
      length: null,
      limit: plan.limit,
      bufferSize: plan.limit,
      ...timeout,
    });
    return forwardRead(req, options, read);
  }
  const body = plan.kind === "ready" ? plan.body : null;
  if (body?.kind !== "stream") {
    return forward(req, options, received(req, options, body));
  }
  // Streamed as it arrives: each wait for the client's bytes is timed.
  return forward(req, options, {
    kind: "stream",
    stream: body.stream,
    length: body.length,
    timer: new StreamedRead(timeout.timeoutMs, timeout.deadlines),
  });
}

/**
 * A body read from the client, before it is sent: the one place the
 * request learns its length when it declared none (the keeper takes it
 * only then). A streamed body's size is not known before it went. An
 * empty chunked body read is 0 bytes, sent as `Content-Length: 0` as nginx
 * sends `rb->received` (an HTTP/2 body without a length or data stays
 * none).
 *
 * @returns The body to send.
 */
function received(
  req: Request,
  options: ProxyOptions,
  body: UpstreamCall["body"],
): UpstreamCall["body"] {
  if (body === null) {
    const source = options.bodyOf ?? req;
    if (!source.headers.has("transfer-encoding")) return null;
    options.keeper?.bodyRead?.(0);
    return EMPTY;
  }
  if (body.kind !== "stream") {
    options.keeper?.bodyRead?.(
      body.kind === "bytes" ? body.bytes.length : body.length,
    );
  }
  return body;
}

/** A body read whole (`proxy_request_buffering on`) sent, or why it was not. */
function forwardRead(
  req: Request,
  options: ProxyOptions,
  read: BodyReadResult,
): ProxyResult | Promise<ProxyResult> {
  switch (read.kind) {
    case "ready": {
      const temp = read.temp;
      if (temp === null) {
        return forward(req, options, received(req, options, read.body));
      }
      received(req, options, read.body);
      if (options.keepBody && options.keeper && read.body?.kind === "file") {
        // Kept for a redirect, read by position by each send: closed when
        // the request's answer is chosen (releaseKeptBody).
        options.keeper.keptBody = { body: read.body, temp };
        return forward(req, options, read.body);
      }
      // The file is closed however the forwarding ends, a throw included.
      return new Promise<ProxyResult>((resolve) =>
        resolve(forward(req, options, read.body))
      ).finally(() => temp.close());
    }
    case "too-large":
      if (read.received !== undefined) {
        options.keeper?.bodyRead?.(read.received);
      }
      return { kind: "too-large", message: read.message };
    case "timeout":
      if (read.received !== undefined) {
        options.keeper?.bodyRead?.(read.received, options.readsUnbuffered);
      }
      return { kind: "body-timeout" };
    case "read-failed":
      return bodyReadFailed(read.error, options, read.received);
    case "temp-failed":
      return {
        kind: "temp-failed",
        message: read.opened
          ? `write() to "${read.path}" failed`
          : `open() "${read.path}" failed`,
        error: read.error,
      };
  }
}

/**
 * Sends the request, with its body as read, to the group's servers. Not
 * async: the walk's outcome is turned into the result in a reaction, one
 * suspended frame fewer per request in flight (its generator, its await's
 * closures) than awaiting it here.
 */
function forward(
  req: Request,
  options: ProxyOptions,
  body: UpstreamCall["body"],
): Promise<ProxyResult> {
  if (options.keepBody && options.keeper && body?.kind !== "file") {
    options.keeper.keptBody = body === null
      ? null
      : body.kind === "bytes"
      ? body.bytes
      : STREAMED;
  }
  const walked = walkPeers(options.group, new PeerExchange(req, options, body));
  const tries = options.tries;
  // A streamed body's count, for a line that reads it, and the size of
  // one without a declared length (`$content_length` once it was sent).
  if (
    body?.kind === "stream" &&
    (body.length === null || options.countsBody === true)
  ) {
    return walked.then((outcome) => {
      streamedRead(outcome, body, options);
      if (outcome.kind === "no-live") tries?.noLive(options.group.name);
      return proxyResult(outcome);
    });
  }
  if (!tries) return walked.then(proxyResult);
  return walked.then((outcome) => {
    if (outcome.kind === "no-live") tries.noLive(options.group.name);
    return proxyResult(outcome);
  });
}

/**
 * What a body streamed upstream read of the client's: all of it once it
 * was sent (one without a declared length, `client_max_body_size 0`, then
 * has its size as the request's length, as nginx's once read), or the
 * bytes before its client left or stalled (a length nginx does not know
 * of a body it reads unbuffered). Its head answered first, a body still on
 * its way is not counted.
 */
function streamedRead(
  outcome: PeerOutcome<Response>,
  body: { length: number | null; received?: number },
  options: ProxyOptions,
): void {
  const keeper = options.keeper!;
  if (outcome.kind === "ok") {
    const read = body.received ?? body.length;
    if (read !== null) keeper.bodyRead?.(read);
  } else if (outcome.kind === "failed" && outcome.error.bodyReceived !== null) {
    keeper.bodyRead?.(outcome.error.bodyReceived, options.readsUnbuffered);
  }
}

/**
 * One request's walk over the group's servers, and the call each server is
 * sent: the same object for every try (the tries are one after another),
 * its `host` that of the server tried. The hooks record each try for the
 * access line's `$upstream_*` when there is a record (as
 * {@linkcode recorded}). One object per request where the walk's options,
 * its two callbacks and per try a call and two closures were made.
 */
class PeerExchange implements PeerWalk<UpstreamReply, Response>, UpstreamCall {
  readonly method: string;
  readonly next: NextUpstream;
  readonly path: string;
  readonly upstreamPath: string;
  host = "";
  readonly headers: readonly (readonly [string, string])[];
  readonly body: UpstreamCall["body"];
  readonly streamedBody: boolean;
  readonly client: string | undefined;
  readonly key: string | undefined;
  /** Read only if the exchange outlasts a watchdog period (see UpstreamCall). */
  readonly signal: Request;
  readonly version: "1.0" | "1.1";
  readonly leading: readonly (readonly [string, string])[];
  readonly timeouts: UpstreamTimeouts;
  readonly headBufferSize: number;
  readonly keepalive: boolean;
  readonly upgrade: boolean;
  readonly onConnected: (() => void) | undefined;
  readonly #options: ProxyOptions;
  /** The server being tried (the one that answered, once one has). */
  #peer: UpstreamPeer | null = null;
  /** The server held until the exchange ends (see {@linkcode onEnd}). */
  #held: UpstreamPeer | null = null;
  /** Which try is under way (UpstreamCall.tryIndex): the held server's. */
  tryIndex = 0;

  constructor(req: Request, options: ProxyOptions, body: UpstreamCall["body"]) {
    const { call } = options;
    this.method = req.method;
    this.next = options.next ?? DEFAULT_NEXT_UPSTREAM;
    this.path = options.upstreamPath;
    this.upstreamPath = options.upstreamPath;
    this.headers = options.headers;
    this.body = body;
    this.streamedBody = body?.kind === "stream";
    this.client = options.client;
    this.key = options.key;
    this.signal = req;
    this.version = call.version;
    this.leading = call.leading;
    this.timeouts = call.timeouts;
    this.headBufferSize = call.headBufferSize;
    this.keepalive = call.keepalive;
    this.upgrade = options.upgrade === true;
    this.onConnected = options.tries?.connected;
    this.#options = options;
  }

  attempt(peer: UpstreamPeer): Promise<UpstreamReply> {
    this.#options.tries?.begin(peer.spec.address.peer);
    this.#peer = peer;
    this.#held = peer;
    this.tryIndex++;
    this.host = peer.spec.address.origin.slice("http://".length);
    return peer.client.send(this);
  }

  accept(reply: UpstreamReply, peer: UpstreamPeer): Response {
    if (reply.upgraded !== undefined) {
      // An upgrade nobody tunnels (ngx_http_upstream_upgrade refuses it in
      // a subrequest): the upstream's connection is closed, its server
      // freed (an upgraded connection is the caller's: no onEnd comes).
      try {
        reply.upgraded.conn.close();
      } catch {
        // Closed already.
      }
      this.onEnd();
    }
    // Turned first: a head that cannot be relayed is the try's failure
    // (nginx's `upstream sent invalid header`, 502), not its status.
    const response = this.#options.toResponse(reply, peer);
    this.#options.tries?.answered(reply.head.status);
    // One place for every relay (proxy_pass, fastcgi_pass): an
    // X-Accel-Redirect nginx finds unsafe is logged as the head is read
    // (ngx_http_parse_unsafe_uri under NGX_HTTP_LOG_UNSAFE).
    const unsafe = unsafeAccelMessage(response);
    if (unsafe !== null) {
      this.#options.log?.({
        level: "error",
        message: unsafe,
        action: "reading response header from upstream",
        upstream: upstreamField(peer, this.upstreamPath),
      });
    }
    return response;
  }

  statusOf(reply: UpstreamReply): number {
    return reply.head.status;
  }

  drop(reply: UpstreamReply, dropped: DroppedAnswer): void {
    dropReply(reply, dropped, this.#options);
  }

  /**
   * The exchange with the server tried is over: the walk's failure, or the
   * transport's end of the answer. Frees it once (nginx's `u->peer.free`);
   * a transport's end of an earlier try (its `tryIndex`), come late, frees
   * nothing: that try's server was freed when the walk moved past it.
   *
   * @param tryIndex The try that ended (the transport's); the current one
   * when absent (the walk's).
   */
  onEnd(tryIndex?: number): void {
    const held = this.#held;
    if (held === null) return;
    if (tryIndex !== undefined && tryIndex !== this.tryIndex) return;
    this.#held = null;
    this.#options.group.release(held);
  }

  onFailure(failure: AttemptFailure): void {
    this.#options.tries?.failed(upstreamStatus(failure.error));
    this.#options.onFailure(failure);
  }

  /** The body failed after the answer went out: a failure of that server. */
  onBodyError(error: UpstreamError): void {
    this.onFailure({
      error,
      upstream: upstreamField(this.#peer!, this.upstreamPath),
      disabled: false,
    });
  }

  /** Bytes beyond the answer's framing: nginx's warning, no failure. */
  onBodyWarning(message: string): void {
    this.#options.onWarning({
      message,
      upstream: upstreamField(this.#peer!, this.upstreamPath),
    });
  }
}

/**
 * Drops an answer the walk moved past (`ngx_http_upstream_next` closes its
 * connection): cancelling closes it and frees the server at once, so the
 * next try's server is not the one freed later. Its status goes to
 * `$upstream_status`; a server it took out gets nginx's warning.
 *
 * @param reply The answer.
 * @param dropped Its status, server and whether it was taken out.
 * @param options The request's record and warning hook.
 */
export function dropReply(
  reply: UpstreamReply,
  dropped: DroppedAnswer,
  options: Pick<ProxyOptions, "tries" | "onWarning">,
): void {
  const body = reply.body;
  if (body instanceof ReadableStream) body.cancel().catch(() => {});
  reply.upgraded?.conn.close();
  options.tries?.answered(dropped.status);
  if (dropped.disabled) {
    options.onWarning({
      message: "upstream server temporarily disabled",
      upstream: dropped.upstream,
      action: "reading response header from upstream",
    });
  }
}

/**
 * The walk's outcome as the proxy's result: a streamed body that stalled
 * past `client_body_timeout` is the body's 408, as one read first.
 */
function proxyResult(outcome: PeerOutcome<Response>): ProxyResult {
  if (outcome.kind === "ok") {
    return { kind: "response", response: outcome.value };
  }
  return outcome.kind === "failed" && outcome.error.bodyTimedOut
    ? BODY_TIMEOUT
    : outcome;
}

/** The walk's failure and reply hooks. */
type WalkHooks = Pick<ProxyOptions, "onFailure" | "toResponse">;

/**
 * The walk's failure and reply hooks, recording each try's status for the
 * access line's `$upstream_*` when there is a record; the caller's own
 * hooks when there is none (nothing made on the common path).
 *
 * @param options The caller's hooks.
 * @param tries The request's record, or `null`.
 * @returns The hooks to walk with.
 */
export function recorded(
  options: WalkHooks,
  tries: UpstreamTries | null,
): WalkHooks {
  if (tries === null) {
    // The caller's hooks, callable apart from their object (they may be
    // its methods).
    return {
      onFailure: (failure) => options.onFailure(failure),
      toResponse: (reply, peer) => options.toResponse(reply, peer),
    };
  }
  return {
    onFailure: (failure) => {
      tries.failed(upstreamStatus(failure.error));
      options.onFailure(failure);
    },
    toResponse: (reply, peer) => {
      // Turned first: a head that cannot be relayed is the try's failure
      // (nginx's `upstream sent invalid header`, 502), not its status.
      const response = options.toResponse(reply, peer);
      tries.answered(reply.head.status);
      return response;
    },
  };
}
