/**
 * The FastCGI content handler of a location (`ngx_http_fastcgi_handler`):
 * the request's parameters evaluated and encoded once (`params.ts`,
 * `records.ts`), then the proxy's own forwarding (`proxyRequest`: the body
 * read as `client_max_body_size` and request buffering say, the walk over
 * the group's servers with nginx's failover and lines) with the FastCGI
 * transport (`client.ts`) as each server's; the reply relayed through the
 * fields nginx hides for FastCGI and `fastcgi_hide_header` /
 * `fastcgi_pass_header`, or handed to `error_page` under
 * `fastcgi_intercept_errors`. Every line names the server as nginx does,
 * `upstream: "fastcgi://127.0.0.1:9000"`.
 *
 * @module
 */

import type { FastcgiConf } from "../engine/mod.ts";
import { errorResponse, makeResponse } from "../response/mod.ts";
import type {
  NextUpstream,
  UpstreamGroup,
  UpstreamPeer,
  UpstreamReply,
} from "../upstream/mod.ts";
import {
  type FailureCounter,
  type LocationCall,
  type LocationRequest,
  PassForward,
  proxyRequest,
  type ProxyResult,
  type RequestEvent,
  type UpstreamRegistry,
} from "../proxy/mod.ts";
import { attachRequest, RecordTooBig } from "./client.ts";
import { requestParams } from "./params.ts";
import { encodeRequestHead } from "./records.ts";
import { type Intercepted, relayReply, stderrText } from "./reply.ts";

/** What the FastCGI handler needs from the gateway, made once. */
export interface FastcgiContext {
  /** The groups `fastcgi_pass` names, with FastCGI transports. */
  registry: UpstreamRegistry;
  /** Counters for the status endpoint. */
  stats: FailureCounter;
  /** Shutdown has begun: a body cut off then is not the client leaving. */
  stopping?: () => boolean;
  /** See `ProxyOptions.countsBody`: some log line reads `$request_length`. */
  countsBody?: boolean;
}

/**
 * Passes one request to a location's FastCGI group.
 *
 * @param req The client's request.
 * @param request The location, the request's variables and state, its log.
 * @param context The groups and counters.
 * @returns The application's answer, or nginx's page for the status the
 * request ends with (500, 502, 504, 499, 400, 413, or an intercepted one).
 * @throws The defect (not an upstream failure) that ended the attempts.
 */
export function fastcgiLocation(
  req: Request,
  request: LocationRequest,
  context: FastcgiContext,
): Promise<Response> {
  try {
    return passFor(req, request, context);
  } catch (error) {
    return Promise.reject(error);
  }
}

function passFor(
  req: Request,
  request: LocationRequest,
  context: FastcgiContext,
): Promise<Response> {
  const fastcgi = request.conf.fastcgi;
  const group = fastcgi && context.registry.get(fastcgi.group);
  if (fastcgi === undefined || group === undefined) {
    throw new TypeError(
      `Cannot pass to FastCGI in location "${request.conf.name}": no fastcgi_pass group`,
    );
  }
  const log = fastcgiLog(request.log);
  const { vars } = request;
  let records: Uint8Array | { tooBig: number } | null = null;
  attachRequest(req, {
    // Made on the first try, once the body is read, and kept for the next.
    records: () => {
      if (records !== null) return records;
      // A body read whole without a declared length has its length in
      // $content_length by now (proxy.ts tells the request once read).
      return records = encodeRequestHead(
        requestParams(fastcgi, vars, req.headers),
        fastcgi.keepConn,
      );
    },
    sendBody: fastcgi.passRequestBody,
    onStderr: (bytes, action, peer) =>
      log({
        level: "error",
        message: `FastCGI sent in stderr: "${stderrText(bytes)}"`,
        action,
        upstream: `fastcgi://${peer}`,
      }),
  });
  request.tries?.startGroup();
  const forward = new FastcgiForward(req, request, {
    context,
    group,
    fastcgi,
    log,
  });
  return proxyRequest(req, forward).then((result) => forward.settle(result));
}

/**
 * The request's log with the server named as nginx names a FastCGI one:
 * the proxy's lines say `http://`.
 */
function fastcgiLog(
  log: (event: RequestEvent) => void,
): (event: RequestEvent) => void {
  return (event) =>
    log(
      event.upstream?.startsWith("http://")
        ? { ...event, upstream: `fastcgi://${event.upstream.slice(7)}` }
        : event,
    );
}

/**
 * One request's pass: what FastCGI sends and relays, and how it settles;
 * what every pass fills alike is {@linkcode PassForward}'s.
 */
class FastcgiForward extends PassForward<FastcgiContext> {
  readonly upstreamPath = "";
  override readonly scheme = "fastcgi://";
  readonly headers: [string, string][] = [];
  readonly call: LocationCall;
  readonly fastcgi: FastcgiConf;
  /** The status `fastcgi_intercept_errors` handed to `error_page`. */
  intercepted: Intercepted | null = null;

  constructor(
    req: Request,
    request: LocationRequest,
    at: {
      context: FastcgiContext;
      group: UpstreamGroup;
      fastcgi: FastcgiConf;
      log: (event: RequestEvent) => void;
    },
  ) {
    super(req, request, at);
    const { fastcgi } = at;
    this.fastcgi = fastcgi;
    this.call = {
      version: "1.1",
      leading: [],
      timeouts: fastcgi.timeouts,
      headBufferSize: fastcgi.bufferSize,
      keepalive: false,
    };
  }

  /** `fastcgi_pass_request_body` (see `ProxyOptions.sendsBody`). */
  get sendsBody(): boolean {
    return this.fastcgi.passRequestBody;
  }

  /** The location's `fastcgi_next_upstream` (a getter: no slot per request). */
  get next(): NextUpstream {
    return this.fastcgi.nextUpstream;
  }

  toResponse(reply: UpstreamReply, peer: UpstreamPeer): Response {
    this.answeredBy = peer;
    const relayed = relayReply(reply, {
      fastcgi: this.fastcgi,
      conf: this.conf,
      vars: this.vars,
    });
    if ("response" in relayed) return relayed.response;
    this.intercepted = relayed.intercepted;
    // A stand-in, never sent: settle() answers with the error page.
    return makeResponse(null, { status: 204 });
  }

  /** How the pass ended, as the client's response, with its line. */
  settle(result: ProxyResult): Response {
    if (result.kind === "response") {
      const stood = this.intercepted;
      if (stood !== null) {
        return this.keep(
          errorResponse(stood.status, {
            head: this.head,
            headers: stood.headers,
          }),
          result,
        );
      }
      return this.keep(result.response, result);
    }
    if (result.kind === "defect" && result.error instanceof RecordTooBig) {
      // ngx_http_fastcgi_create_request: NGX_ERROR, finalized with 500.
      this.log({ level: "alert", message: result.error.message });
      return errorResponse(500, { head: this.head });
    }
    return this.keep(this.failed(result), result);
  }
}
