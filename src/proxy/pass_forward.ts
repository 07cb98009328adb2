/**
 * What forwarding a location's request shares, whether it passes to an
 * http upstream (`location_proxy.ts`) or to FastCGI (`fastcgi/`): the
 * request's part in it (`LocationRequest`), the proxy's options every pass
 * fills alike (`PassForward`: the group, the body's limits and buffering,
 * the tries, the failure and warning lines, and nginx's page for
 * forwarding that got no answer). One place, so the two handlers cannot
 * drift apart.
 *
 * @module
 */

import type { LocationConf, RequestVars } from "../engine/mod.ts";
import type { UpstreamTries } from "../log/mod.ts";
import { errorResponse, unreadResponse } from "../response/mod.ts";
import {
  type AttemptFailure,
  type NextUpstream,
  upstreamField,
  type UpstreamGroup,
  type UpstreamPeer,
  type UpstreamReply,
  upstreamStatus,
} from "../upstream/mod.ts";
import { accelRedirectOf } from "./accel_redirect.ts";
import {
  type FailureCounter,
  logAttempt,
  logOutcome,
  logWarning,
  type RequestEvent,
} from "./outcome_log.ts";
import type {
  AttemptWarning,
  BodyTimeout,
  LocationCall,
  ProxyOptions,
  ProxyResult,
  RequestBuffering,
} from "./proxy_options.ts";
import { type BodyKeeper, keepsBody } from "./kept_body.ts";

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
  /** See {@linkcode ProxyOptions.bodyTimeout}: for a body not read whole first. */
  bodyTimeout?: BodyTimeout | undefined;
  /** Where the tries are recorded for the access line's `$upstream_*`. */
  tries?: UpstreamTries | null;
  /** See {@linkcode ProxyOptions.bodyOf}: the client's request, for a page. */
  bodyOf?: Request | undefined;
  /** See {@linkcode ProxyOptions.keeper}: the client request's flow. */
  keeper?: BodyKeeper | undefined;
  /**
   * An SSI include's request (nginx's `r != r->main`): never tunnelled;
   * an upstream's `101` to the client's upgrade fields it carries ends
   * the page (ngx_http_upstream_upgrade's `connection upgrade in
   * subrequest`).
   */
  subrequest?: boolean;
}
/** What every pass needs from the gateway, made once. */
export interface ForwardContext {
  /** Counters for the status endpoint. */
  stats: FailureCounter;
  /** Shutdown has begun: a body cut off then is not the client leaving. */
  stopping?: () => boolean;
  /** See `ProxyOptions.countsBody`: some log line reads `$request_length`. */
  countsBody?: boolean;
}

const CLOSE: [string, string][] = [["connection", "close"]];

/** The `upstream:` field kept past a pass, by the answer the flow redirects. */
const kept = new WeakMap<Response, string>();

/**
 * The `upstream:` field of the server a pass last tried, for an answer
 * the request flow redirects (an error page's status, an
 * `X-Accel-Redirect`): nginx keeps `r->upstream` through the internal
 * redirect, so every later line of the request names it
 * (ngx_http_log_error_handler).
 *
 * @param response An answer a pass settled with.
 * @returns `http://peer/uri` (`fastcgi://peer`), or `undefined` when the
 * answer is not redirected or no server was tried.
 */
export function keptUpstream(response: Response): string | undefined {
  return kept.get(response);
}

/**
 * One request's forwarding for a location, as the proxy's options: the
 * fields every pass fills alike, set once here, and the lines of its
 * failed attempts. Each handler adds what it sends and how it relays.
 *
 * @typeParam C The handler's context.
 */
export abstract class PassForward<C extends ForwardContext = ForwardContext>
  implements ProxyOptions {
  readonly group: UpstreamGroup;
  readonly clientMaxBodySize: number;
  readonly client: string;
  /** The evaluated key of a `hash` group (`undefined` for the others). */
  readonly key: string | undefined;
  readonly contentLength: number | null;
  readonly buffering: RequestBuffering | null;
  readonly bodyTimeout: BodyTimeout | null;
  readonly tries: UpstreamTries | null;
  readonly log: (event: RequestEvent) => void;
  readonly conf: LocationConf;
  readonly vars: RequestVars;
  /** The handler's groups and counters. */
  readonly context: C;
  /** A HEAD request: error pages go without a body. */
  readonly head: boolean;
  /** See `ProxyOptions.bodyOf`: the client's request, for an error page. */
  readonly bodyOf: Request | undefined;
  /** See `ProxyOptions.keeper`: where the client's request keeps its body. */
  readonly keeper: BodyKeeper | undefined;
  /** The path and query requested (empty for FastCGI). */
  abstract readonly upstreamPath: string;
  /** The scheme its `upstream:` fields name (`fastcgi://` for FastCGI). */
  readonly scheme: string = "http://";
  /** The server whose answer is relayed, set by `toResponse`. */
  answeredBy: UpstreamPeer | null = null;
  /** The last failed attempt, for a failure's `upstream:` field. */
  #lastFailure: AttemptFailure | null = null;
  /** The client's fields the location passes. */
  abstract readonly headers: [string, string][];
  /** The location's call settings. */
  abstract readonly call: LocationCall;
  /** The location's `*_next_upstream`. */
  abstract readonly next: NextUpstream;

  /**
   * @param req The client's request.
   * @param request The location, the request's variables and state, its log.
   * @param at The handler's context, the group chosen and, when its lines
   * name the server otherwise, the log to write them with.
   */
  constructor(
    req: Request,
    request: LocationRequest,
    at: {
      context: C;
      group: UpstreamGroup;
      log?: (event: RequestEvent) => void;
    },
  ) {
    const { conf, vars } = request;
    this.group = at.group;
    // A declared length over client_max_body_size was refused where the
    // location was found (engine/phases.ts); a body without one is counted
    // against it as it is read (proxy.ts).
    this.clientMaxBodySize = conf.clientMaxBodySize;
    this.client = vars.remoteAddr;
    // A `hash` group's key (ngx_http_upstream_init_hash_peer).
    this.key = at.group.hashKey?.evaluate(vars);
    this.contentLength = request.contentLength;
    this.buffering = request.buffering ?? null;
    this.bodyTimeout = request.bodyTimeout ?? null;
    this.tries = request.tries ?? null;
    this.log = at.log ?? request.log;
    this.conf = conf;
    this.vars = vars;
    this.context = at.context;
    this.head = req.method === "HEAD";
    this.bodyOf = request.bodyOf;
    this.keeper = request.keeper;
  }

  /** See `ProxyOptions.countsBody`. */
  get countsBody(): boolean {
    return this.context.countsBody === true;
  }

  /**
   * See `ProxyOptions.keepBody`: a redirect may follow the location (its
   * error pages, an upstream's `X-Accel-Redirect`).
   */
  get keepBody(): boolean {
    return keepsBody(this.conf);
  }

  /**
   * A failed attempt's lines, as it fails.
   *
   * @param failure The attempt's failure.
   */
  onFailure(failure: AttemptFailure): void {
    this.#lastFailure = failure;
    logAttempt(failure, this.log, this.context.stats);
  }

  /**
   * Keeps the `upstream:` field with an answer the flow may redirect (see
   * {@linkcode keptUpstream}): an error page's status, or an
   * `X-Accel-Redirect` stand-in (a 204 without body). Made only then: a
   * relayed answer pays one status test.
   *
   * @param response The answer the pass settles with.
   * @param result How forwarding ended.
   * @returns The answer.
   */
  keep(response: Response, result: ProxyResult): Response {
    if (
      result.kind === "response" && response === result.response &&
      (response.status !== 204 || accelRedirectOf(response) === undefined)
    ) {
      return response;
    }
    const peer = this.answeredBy;
    const field = peer !== null
      ? upstreamField(peer, this.upstreamPath)
      : this.#lastFailure !== null
      ? this.#lastFailure.upstream
      // ngx_http_upstream_get_round_robin_peer names the group when no
      // server is live.
      : result.kind === "no-live"
      ? `http://${this.group.name}${this.upstreamPath}`
      : null;
    if (field !== null) {
      kept.set(response, this.scheme + field.slice("http://".length));
    }
    return response;
  }

  /**
   * Bytes beyond an answer's framing: nginx's warning line.
   *
   * @param warning The warning and its server.
   */
  onWarning(warning: AttemptWarning): void {
    logWarning(warning, this.log);
  }

  /**
   * The client's response for the upstream's reply.
   *
   * @param reply The reply.
   * @param peer The server that sent it.
   * @returns The response (a throw is that server's failure).
   */
  abstract toResponse(reply: UpstreamReply, peer: UpstreamPeer): Response;

  /**
   * How forwarding that got no answer ended, as nginx's page for its
   * status, after its line ({@linkcode logOutcome}); a defect is thrown.
   *
   * @param result How forwarding ended, without an answer.
   * @returns The client's response.
   * @throws The defect that ended the attempts.
   */
  failed(result: Exclude<ProxyResult, { kind: "response" }>): Response {
    const { head, log } = this;
    const { stats, stopping } = this.context;
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
    logOutcome(result, {
      log,
      stats,
      group: this.group.name,
      upstreamPath: this.upstreamPath,
    });
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
      case "body-not-kept":
        return page(500, true);
      case "client-left":
        // nginx finalizes a body the client cut off with 400, not 499
        // (ngx_http_do_read_client_request_body sets c->error and returns
        // NGX_HTTP_BAD_REQUEST), and sends nothing: no page, no error_page.
        return unreadResponse(400);
      case "failed":
        // A client that left reads nothing: no page, no error_page.
        return result.error.kind === "client-closed"
          ? unreadResponse(upstreamStatus(result.error))
          : page(upstreamStatus(result.error));
      case "defect":
        throw result.error;
    }
  }
}
