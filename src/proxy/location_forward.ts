/**
 * One proxied request's forwarding (`LocationForward`): what a location
 * with `proxy_pass` sends (its path, fields and call settings), how the
 * upstream's reply becomes the client's response (`location_reply.ts`),
 * and how forwarding settles: an intercepted status, a tunnel's 101 (whose
 * end {@linkcode tunnelClosed} finds), or nginx's page for a failure.
 *
 * @module
 */

import type { LocationConf, RequestVars } from "../engine/mod.ts";
import { errorResponse, makeResponse } from "../response/mod.ts";
import {
  type NextUpstream,
  UpstreamError,
  upstreamField,
  type UpstreamGroup,
  type UpstreamPeer,
  type UpstreamReply,
} from "../upstream/mod.ts";
import type { FailureCounter, RequestEvent } from "./outcome_log.ts";
import type { LocationCall, ProxyResult } from "./proxy_options.ts";
import { interceptedBy, relay } from "./location_reply.ts";
import { type LocationRequest, PassForward } from "./pass_forward.ts";
import type { UpstreamFields } from "./set_headers.ts";
import type { UpstreamRegistry } from "./upstream_registry.ts";

/** What proxying needs from the gateway, made once. */
export interface LocationProxyContext {
  /** The configuration's upstream groups. */
  registry: UpstreamRegistry;
  /** Counters for the status endpoint. */
  stats: FailureCounter;
  /** Shutdown has begun: a body cut off then is not the client leaving. */
  stopping?: () => boolean;
  /** Locations match without regard to case (nginx for Windows). */
  caseless?: boolean;
  /** See `ProxyOptions.countsBody`: some log line reads `$request_length`. */
  countsBody?: boolean;
  /**
   * The runtime's upgrade of a client to WebSocket, `Deno.upgradeWebSocket`
   * unless a test stands in for it (its refusals).
   */
  upgradeWebSocket?: (req: Request) => Deno.WebSocketUpgrade;
}

/** The 101 answers of tunnels, each with the promise of its end. */
const tunnels = new WeakMap<Response, Promise<number>>();

/**
 * The end of the tunnel a response opened: its access line waits for it.
 *
 * @param response A response `proxyLocation` returned.
 * @returns Settles with the bytes relayed when the tunnel closes;
 * `undefined` for any other response.
 */
export function tunnelClosed(
  response: Response,
): Promise<number> | undefined {
  return tunnels.get(response);
}

/** The `upstream:` field of a relayed answer a filter may log about (SSI). */
const relayed = new WeakMap<Response, string>();

/**
 * The `upstream:` field of the error lines about a relayed answer's body,
 * for a location whose filters write such lines (`ssi on`).
 *
 * @param response The client's response.
 * @returns `http://peer/uri`, or `undefined` for another response.
 */
export function relayedUpstream(response: Response): string | undefined {
  return relayed.get(response);
}

/**
 * One request's forwarding: the proxy's options, the location's call
 * settings, its reply hooks and how it settles, in one object (they were
 * a closure or an object each, made per request, held while the upstream
 * answers). What every pass fills alike is {@linkcode PassForward}'s.
 */
export class LocationForward extends PassForward<LocationProxyContext>
  implements LocationCall {
  readonly upstreamPath: string;
  readonly headers: [string, string][];
  readonly version: "1.0" | "1.1";
  readonly leading: [string, string][];
  readonly timeouts: LocationConf["proxyTimeouts"];
  readonly headBufferSize: number;
  readonly keepalive: boolean;
  /** The end of the tunnel, when the request asks for one. */
  readonly tunnel: PromiseWithResolvers<number> | null;
  /** A subrequest's upgrade, not tunnelled (see `ProxyOptions.upgrade`). */
  upgrade = false;
  readonly #request: LocationRequest;
  readonly #req: Request;

  /** The location's `proxy_next_upstream` (a getter: no slot per request). */
  get next(): NextUpstream {
    return this.conf.proxyNextUpstream;
  }

  /**
   * @param req The client's request.
   * @param request The location, the request's variables and state, its log.
   * @param at The groups and counters, the group chosen, the path and
   * fields sent, and the tunnel's end when the request asks for one.
   */
  constructor(
    req: Request,
    request: LocationRequest,
    at: {
      context: LocationProxyContext;
      group: UpstreamGroup;
      path: string;
      fields: UpstreamFields;
      tunnel: PromiseWithResolvers<number> | null;
    },
  ) {
    super(req, request, at);
    const { conf } = request;
    const { fields } = at;
    this.upstreamPath = at.path;
    this.headers = fields.passed;
    this.version = conf.proxyHttpVersion;
    this.leading = fields.set;
    this.timeouts = conf.proxyTimeouts;
    this.headBufferSize = conf.proxyBufferSize;
    this.keepalive = fields.keepalive;
    this.tunnel = at.tunnel;
    this.#request = request;
    this.#req = req;
  }

  /** The location's call settings: this object's own. */
  get call(): LocationCall {
    return this;
  }

  /** See `ProxyOptions.readsUnbuffered`. */
  get readsUnbuffered(): boolean {
    return this.buffering === null && this.version === "1.1";
  }

  /** `http://host[:port]` for a rewritten `Location`, made when read. */
  get origin(): string {
    const request = this.#request;
    return request.origin ?? request.originOf?.origin ??
      originOf(this.#req, this.vars);
  }

  /**
   * The client's response for the upstream's reply, through
   * `proxy_redirect`, `proxy_hide_header` and `proxy_pass_header`.
   *
   * @param reply The reply.
   * @param peer The server that sent it.
   * @returns The client's response.
   */
  toResponse(reply: UpstreamReply, peer: UpstreamPeer): Response {
    if (reply.upgraded !== undefined) {
      return upgradeInSubrequest(
        this.log,
        upstreamField(peer, this.upstreamPath),
      );
    }
    this.answeredBy = peer;
    const response = relay(reply, this);
    if (this.conf.ssi !== undefined) {
      relayed.set(response, upstreamField(peer, this.upstreamPath));
    }
    return response;
  }

  /**
   * How forwarding ended, as the client's response, with its line.
   *
   * @param result How forwarding ended.
   * @returns The client's response.
   */
  settle(result: ProxyResult): Response {
    if (result.kind !== "response") {
      return this.keep(this.failed(result), result);
    }
    // Only `proxy_intercept_errors` makes a stand-in.
    const stood = this.conf.proxyInterceptErrors
      ? interceptedBy(result.response)
      : undefined;
    if (stood !== undefined) {
      // An intercepted 401 keeps the upstream's `WWW-Authenticate`
      // (`ngx_http_upstream_intercept_errors`).
      return this.keep(
        errorResponse(stood.status, {
          head: this.head,
          headers: stood.headers,
        }),
        result,
      );
    }
    if (this.tunnel !== null && result.response.status === 101) {
      tunnels.set(result.response, this.tunnel.promise);
    }
    return this.keep(result.response, result);
  }
}

/**
 * `http://host[:port]` as nginx's header filter writes an absolute
 * `Location`: the request's host (the server's address without one) and
 * the port the request came in on, left out when 80.
 */
function originOf(req: Request, vars: RequestVars): string {
  const host = req.headers.has("host")
    ? vars.host
    : vars.serverAddr.includes(":")
    ? `[${vars.serverAddr}]`
    : vars.serverAddr;
  const port = vars.serverPort === 80 ? "" : `:${vars.serverPort}`;
  return `http://${host}${port}`;
}

/**
 * An upstream's `101` to a subrequest (ngx_http_upstream_upgrade): nginx's
 * line, and a body that fails at once, so the page that includes it ends
 * there (nginx terminates the main request). The connection was closed
 * when the answer was taken (`proxy.ts`).
 */
function upgradeInSubrequest(
  log: (event: RequestEvent) => void,
  upstream: string,
): Response {
  const error = new UpstreamError("connection upgrade in subrequest", {
    kind: "invalid-response",
    action: "reading response header from upstream",
  });
  log({
    level: "error",
    message: error.message,
    action: error.action,
    upstream,
  });
  // The SSI filter logs no second line for an UpstreamError.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.error(error);
    },
  });
  return makeResponse(body, { status: 502 });
}
