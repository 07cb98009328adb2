/**
 * The proxy content handler of a location (`ngx_http_proxy_handler`): the
 * request sent to the location's upstream group as its `LocationConf` says
 * (the URI rule, `proxy_set_header`, `proxy_http_version`, timers,
 * `proxy_buffer_size`), the answer relayed through `proxy_redirect`,
 * `proxy_hide_header` and `proxy_pass_header`, or tunnelled when the
 * location asks for a WebSocket. A failure ends as nginx's page for its
 * status (`errorResponse`, as `ngx_http_finalize_request(r, status)`), so
 * `error_page` can apply, as can an upstream error status under
 * `proxy_intercept_errors`. The result is the client's `Response` from here
 * to the access line; a tunnel's end is found by {@linkcode tunnelClosed}.
 *
 * @module
 */

import { fieldBytes } from "../runtime/mod.ts";
import type { LocationConf, RequestVars } from "../engine/mod.ts";
import type { UpstreamTries } from "../log/mod.ts";
import { errorResponse } from "../response/mod.ts";
import {
  type AttemptFailure,
  type NextUpstream,
  UpstreamError,
  upstreamField,
  type UpstreamGroup,
  type UpstreamPeer,
  type UpstreamReply,
  upstreamStatus,
} from "../upstream/mod.ts";
import {
  type FailureCounter,
  logAttempt,
  logOutcome,
  logWarning,
  type RequestEvent,
} from "./outcome_log.ts";
import { proxyRequest } from "./proxy.ts";
import type {
  AttemptWarning,
  LocationCall,
  ProxyOptions,
  ProxyResult,
  RequestBuffering,
} from "./proxy_options.ts";
import { interceptedBy, relay } from "./location_reply.ts";
import {
  fieldPlan,
  type UpstreamFields,
  upstreamFields,
} from "./set_headers.ts";
import { groupOf, parseProxyUrl } from "./proxy_url.ts";
import type { UpstreamRegistry } from "./upstream_registry.ts";
import { rawUpstreamUri, upstreamUri } from "./upstream_uri.ts";
import { isWebSocketRequest, proxyWebSocket } from "./websocket_proxy.ts";
import { requestTargetText } from "./target_text.ts";

/** One request's part in proxying, from the request flow. */
export interface LocationRequest {
  /** The location's merged settings (`proxyPass` set). */
  conf: LocationConf;
  /** The request's variables, after the rewrite phases. */
  vars: RequestVars;
  /**
   * `$uri` was changed by `rewrite` or an internal redirect to a URI: the
   * client's target no longer goes upstream as it was sent.
   */
  rewritten: boolean;
  /**
   * The request was rewritten or redirected internally (named locations
   * too): `$uri` is escaped again. `rewritten` when absent.
   */
  internal?: boolean;
  /** A `rewrite … break` ran in this location: `proxy_pass`'s URI part is not applied. */
  breakInLocation?: boolean;
  /**
   * The location name whose length the URI part replaces: the location's
   * own (the default), or for an `if` block its location's.
   */
  matchedPrefix?: string;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /** The declared `Content-Length`, parsed once; `null` when none. */
  contentLength: number | null;
  /**
   * The client's fields of `req` as already walked (flat: name, value…,
   * in `Headers.forEach`'s order); walked here when absent.
   */
  clientFields?: readonly string[] | null;
  /**
   * `http://host[:port]` for a rewritten `Location` that starts with `/`;
   * by default `$host` (or the server's address without `Host`) with
   * `$server_port` unless 80, as nginx's header filter builds it.
   */
  origin?: string;
  /**
   * Where `origin` is read when `origin` is not given, once an answer
   * needs it (a rewritten `Location`): most answers do not.
   */
  originOf?: { readonly origin: string };
  /** How the body is read whole first (`proxy_request_buffering on`). */
  buffering?: RequestBuffering | undefined;
  /** Where the tries are recorded for the access line's `$upstream_*`. */
  tries?: UpstreamTries | null;
  /**
   * An SSI include's request (nginx's `r != r->main`): never tunnelled;
   * an upstream's `101` to the client's upgrade fields it carries ends
   * the page (ngx_http_upstream_upgrade's `connection upgrade in
   * subrequest`).
   */
  subrequest?: boolean;
}

/** The 101 answers of tunnels, each with the promise of its end. */
const tunnels = new WeakMap<Response, Promise<number>>();

/**
 * The end of the tunnel a response opened: its access line waits for it.
 *
 * @param response A response {@linkcode proxyLocation} returned.
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
}

const CLOSE: [string, string][] = [["connection", "close"]];

/**
 * Proxies one request for a location.
 *
 * @param req The client's request.
 * @param request The location, the request's variables and state, its log.
 * @param context The upstream groups and counters.
 * @returns The upstream's answer, the 101 of a tunnel, or nginx's page for
 * the status the request ends with (502, 504, 499, 400, 413, or an
 * upstream status intercepted by `proxy_intercept_errors`).
 * @throws The defect (not an upstream failure) that ended the attempts,
 * once the attempts before it are logged.
 */
export function proxyLocation(
  req: Request,
  request: LocationRequest,
  context: LocationProxyContext,
): Promise<Response> {
  // Not async: the answer is settled in a reaction to the forwarding's
  // promise, one suspended frame fewer per request in flight. A throw
  // before it still ends as a rejection, which the caller's cleanup waits
  // for (request/engine_route.ts gives a limit_conn count back on it).
  try {
    return forwardFor(req, request, context);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** {@linkcode proxyLocation}'s work: the request made, sent, settled. */
function forwardFor(
  req: Request,
  request: LocationRequest,
  context: LocationProxyContext,
): Promise<Response> {
  const { conf, vars, log } = request;
  const pass = conf.proxyPass;
  if (pass === null) {
    throw new TypeError(
      `Cannot proxy in location "${conf.name}": no proxy_pass`,
    );
  }
  let group: UpstreamGroup | undefined;
  let evaluated: string;
  if (pass.url === null) {
    group = context.registry.get(pass.group);
    // `proxy_pass` with variables in its URI part: the value evaluated
    // is the URI sent, as it is (ngx_http_proxy_eval); when it is empty,
    // the client's URI goes as with no URI part.
    evaluated = pass.dynamic?.evaluate(vars) ?? "";
    vars.proxyHost = pass.proxyHost;
  } else {
    const target = evaluatedTarget(pass.url.evaluate(vars), context);
    if ("status" in target) {
      log({ level: "error", message: target.message });
      return Promise.resolve(
        errorResponse(target.status, { head: req.method === "HEAD" }),
      );
    }
    group = target.group;
    vars.proxyHost = target.proxyHost;
    evaluated = target.uri;
  }
  if (group === undefined) {
    throw new TypeError(
      `Cannot proxy in location "${conf.name}": no upstream group "${pass.group}"`,
    );
  }
  // `station_proxy_raw_uri` while the client's URI stands, else nginx's
  // rule. Every part as its UTF-8 bytes: the engine's $uri, $args and
  // $request_uri are text (Deno.serve hands the target over as text), and
  // nginx's URI rule works on the bytes received.
  const raw = evaluated === "" && conf.proxyRawUri && !request.rewritten &&
      pass.uri !== null
    ? rawUpstreamUri({
      proxyUri: pass.uri,
      locationName: conf.name,
      requestUri: vars.requestUri,
      caseless: context.caseless ?? false,
    })
    : null;
  const path = requestTargetText(
    evaluated !== ""
      ? fieldBytes(evaluated.startsWith("?") ? `/${evaluated}` : evaluated)
      : raw !== null
      ? fieldBytes(raw)
      : upstreamUri({
        proxyUri: pass.uri,
        locationName: fieldBytes(request.matchedPrefix ?? conf.name),
        uri: fieldBytes(vars.uri),
        args: fieldBytes(vars.args),
        requestUri: fieldBytes(vars.requestUri),
        uriChanged: request.rewritten,
        internal: request.internal ?? request.rewritten,
        locationInvalid: request.breakInLocation ?? false,
      }),
  );
  const fields = upstreamFields(
    fieldPlan(conf),
    vars,
    request.clientFields ?? req.headers,
  );
  for (let i = 0; i < fields.unsafe.length; i++) {
    const name = fields.unsafe[i];
    log({
      level: "error",
      message:
        `proxy_set_header "${name}" value holds a line break, field not sent`,
    });
  }
  if (request.contentLength === 0) {
    // nginx sends the declared length of an empty body
    // ($proxy_internal_body_length); the body plan sends none.
    fields.set.push(["Content-Length", "0"]);
  }
  request.tries?.startGroup();
  // A tunnel only where the location sends Upgrade and Connection: upgrade
  // (nginx switches when the upstream answers 101 to those, whatever
  // proxy_http_version says).
  const upgrading = fields.upgrade && isWebSocketRequest(req);
  const tunnel = upgrading && request.subrequest !== true
    ? Promise.withResolvers<number>()
    : null;
  const forwarding = new LocationForward(req, request, {
    context,
    group,
    path,
    fields,
    tunnel,
  });
  // A subrequest's upgrade goes as a plain request that takes a 101.
  if (upgrading && tunnel === null) forwarding.upgrade = true;
  const forwarded = tunnel
    ? proxyWebSocket(req, {
      group,
      upstreamPath: path,
      tries: forwarding.tries,
      headers: fields.passed,
      call: {
        version: conf.proxyHttpVersion,
        leading: fields.set,
        timeouts: conf.proxyTimeouts,
        headBufferSize: conf.proxyBufferSize,
        keepalive: fields.keepalive,
      },
      client: forwarding.client,
      key: forwarding.key,
      onFailure: (failure) => forwarding.onFailure(failure),
      onWarning: (warning) => forwarding.onWarning(warning),
      toResponse: (reply, peer) => forwarding.toResponse(reply, peer),
      timeouts: conf.proxyTimeouts,
      onClosed: tunnel.resolve,
      next: conf.proxyNextUpstream,
    })
    : proxyRequest(req, forwarding);
  // The reaction holds the forwarding, not the request's own object, which
  // then need not outlive it.
  return forwarded.then((result) => forwarding.settle(result));
}

/**
 * One request's forwarding: the proxy's options, the location's call
 * settings, its failure and reply hooks and how it settles, in one object
 * (they were a closure or an object each, made per request, held while
 * the upstream answers).
 */
class LocationForward implements ProxyOptions, LocationCall {
  readonly group: UpstreamGroup;
  readonly upstreamPath: string;
  readonly clientMaxBodySize: number;
  readonly client: string;
  readonly key: string | undefined;
  readonly contentLength: number | null;
  readonly headers: [string, string][];
  readonly buffering: RequestBuffering | null;
  readonly tries: UpstreamTries | null;
  readonly log: (event: RequestEvent) => void;
  readonly version: "1.0" | "1.1";
  readonly leading: [string, string][];
  readonly timeouts: LocationConf["proxyTimeouts"];
  readonly headBufferSize: number;
  readonly keepalive: boolean;
  readonly conf: LocationConf;
  readonly vars: RequestVars;
  /** The upstream groups and counters. */
  readonly context: LocationProxyContext;
  /** The end of the tunnel, when the request asks for one. */
  readonly tunnel: PromiseWithResolvers<number> | null;
  /** A HEAD request: error pages go without a body. */
  readonly head: boolean;
  /** A subrequest's upgrade, not tunnelled (see `ProxyOptions.upgrade`). */
  upgrade = false;
  readonly #request: LocationRequest;
  readonly #req: Request;

  /** The location's `proxy_next_upstream` (a getter: no slot per request). */
  get next(): NextUpstream {
    return this.conf.proxyNextUpstream;
  }

  constructor(
    req: Request,
    request: LocationRequest,
    { context, group, path, fields, tunnel }: {
      context: LocationProxyContext;
      group: UpstreamGroup;
      path: string;
      fields: UpstreamFields;
      tunnel: PromiseWithResolvers<number> | null;
    },
  ) {
    const { conf } = request;
    this.group = group;
    this.upstreamPath = path;
    // A declared length over client_max_body_size was refused before the
    // content handler (request/proxy_handler.ts, for every location); a body
    // without one is counted against it as it is read (proxy.ts).
    this.clientMaxBodySize = conf.clientMaxBodySize;
    this.client = request.vars.remoteAddr;
    // A `hash` group's key (ngx_http_upstream_init_hash_peer).
    this.key = group.hashKey?.evaluate(request.vars);
    this.contentLength = request.contentLength;
    this.headers = fields.passed;
    this.buffering = request.buffering ?? null;
    this.tries = request.tries ?? null;
    this.log = request.log;
    this.version = conf.proxyHttpVersion;
    this.leading = fields.set;
    this.timeouts = conf.proxyTimeouts;
    this.headBufferSize = conf.proxyBufferSize;
    this.keepalive = fields.keepalive;
    this.conf = conf;
    this.vars = request.vars;
    this.context = context;
    this.tunnel = tunnel;
    this.head = req.method === "HEAD";
    this.#request = request;
    this.#req = req;
  }

  /** The location's call settings: this object's own. */
  get call(): LocationCall {
    return this;
  }

  /** `http://host[:port]` for a rewritten `Location`, made when read. */
  get origin(): string {
    const request = this.#request;
    return request.origin ?? request.originOf?.origin ??
      originOf(this.#req, this.vars);
  }

  /** A failed attempt's lines, as it fails. */
  onFailure(failure: AttemptFailure): void {
    logAttempt(failure, this.log, this.context.stats);
  }

  /** Bytes beyond an answer's framing: nginx's warning line. */
  onWarning(warning: AttemptWarning): void {
    logWarning(warning, this.log);
  }

  /** The client's response for the upstream's reply. */
  toResponse(reply: UpstreamReply, peer: UpstreamPeer): Response {
    if (reply.upgraded !== undefined) {
      return upgradeInSubrequest(
        this.log,
        upstreamField(peer, this.upstreamPath),
      );
    }
    const response = relay(reply, this);
    if (this.conf.ssi !== undefined) {
      relayed.set(response, upstreamField(peer, this.upstreamPath));
    }
    return response;
  }

  /** How forwarding ended, as the client's response, with its line. */
  settle(result: ProxyResult): Response {
    return settle(result, this);
  }
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
  return new Response(body, { status: 502 });
}

/**
 * Where a `proxy_pass` with variables in its host sends this request: the
 * group its value names, `$proxy_host` (the port left out when 80, as
 * ngx_http_proxy_set_vars), its URI part; or nginx's line and status when
 * the value is no URL (500) or names nothing the gateway can reach (502).
 */
function evaluatedTarget(
  value: string,
  context: LocationProxyContext,
):
  | { group: UpstreamGroup; proxyHost: string; uri: string }
  | { status: number; message: string } {
  const url = parseProxyUrl(value);
  if (!url.ok) return { status: 500, message: url.message };
  const found = groupOf(url, context.registry);
  if ("message" in found) return { status: 502, message: found.message };
  return {
    group: found.group,
    proxyHost: url.noPort || url.port === 80
      ? url.host
      : `${url.host}:${url.port}`,
    uri: url.uri,
  };
}

/** How forwarding ended, as the client's response, with its line. */
function settle(
  result: ProxyResult,
  { conf, log, context, group, upstreamPath, tunnel, head }: LocationForward,
): Response {
  if (result.kind === "response") {
    // Only `proxy_intercept_errors` makes a stand-in.
    const stood = conf.proxyInterceptErrors
      ? interceptedBy(result.response)
      : undefined;
    if (stood !== undefined) {
      // An intercepted 401 keeps the upstream's `WWW-Authenticate`
      // (`ngx_http_upstream_intercept_errors`).
      return errorResponse(stood.status, { head, headers: stood.headers });
    }
    if (tunnel !== null && result.response.status === 101) {
      tunnels.set(result.response, tunnel.promise);
    }
    return result.response;
  }
  return failurePage(result, {
    log,
    stats: context.stats,
    group: group.name,
    upstreamPath,
    head,
    ...(context.stopping ? { stopping: context.stopping } : {}),
  });
}

/**
 * How forwarding that got no answer ended, as nginx's page for its status,
 * after its line ({@linkcode logOutcome}); a defect is thrown. For
 * `proxy_pass` and `fastcgi_pass` alike.
 *
 * @param result How forwarding ended, without an answer.
 * @param context The request's log and counters, the group's name and the
 * path sent, whether the request is a HEAD, and whether shutdown has begun.
 * @returns The client's response.
 * @throws The defect that ended the attempts.
 */
export function failurePage(
  result: Exclude<ProxyResult, { kind: "response" }>,
  { log, stats, group, upstreamPath, head, stopping }: {
    log: (event: RequestEvent) => void;
    stats: LocationProxyContext["stats"];
    group: string;
    upstreamPath: string;
    head: boolean;
    stopping?: () => boolean;
  },
): Response {
  // nginx's page for the status; `close` ends the connection after it
  // (400, a 413 after part of the body was read).
  const page = (status: number, close = false) =>
    errorResponse(status, { head, ...(close ? { headers: CLOSE } : {}) });
  if (result.kind === "client-left" && stopping?.()) {
    // Deno.serve's shutdown ended the body being read: the client did not
    // leave and must not be told 499. nginx 1.22 closes without an answer;
    // Deno.serve must answer, so the client learns to retry.
    return page(503, true);
  }
  logOutcome(result, { log, stats, group, upstreamPath });
  switch (result.kind) {
    case "too-large":
      log({ level: "error", message: result.message });
      return page(413, true);
    case "no-live":
      return page(502);
    case "bad-body":
      return page(400, true);
    case "body-timeout":
      // nginx closes without an answer; Deno.serve cannot, so the page.
      return page(408, true);
    case "temp-failed":
      return page(500, true);
    case "client-left":
    case "failed":
      return page(upstreamStatus(result.error));
    case "defect":
      throw result.error;
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
