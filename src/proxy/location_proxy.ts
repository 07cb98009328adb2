/**
 * The proxy content handler of a location (`ngx_http_proxy_handler`): the
 * request sent to the location's upstream group as its `LocationConf` says
 * (the URI rule, `proxy_set_header`, `proxy_http_version`, timers,
 * `proxy_buffer_size`), the answer relayed through `proxy_redirect`,
 * `proxy_hide_header` and `proxy_pass_header`, or tunnelled when the
 * location asks for a WebSocket. A failure ends as a status for the
 * request flow to finalize (nginx's `ngx_http_finalize_request(r, status)`),
 * so `error_page` can apply, as can an upstream error status under
 * `proxy_intercept_errors`.
 *
 * @module
 */

import type { LocationConf, RequestVars } from "../engine/mod.ts";
import {
  type UpstreamGroup,
  type UpstreamReply,
  upstreamStatus,
} from "../upstream/mod.ts";
import {
  type FailureCounter,
  logAttempt,
  logOutcome,
  type RequestEvent,
} from "./outcome_log.ts";
import {
  proxyRequest,
  type ProxyResult,
  type RequestBuffering,
} from "./proxy.ts";
import { interceptedBy, relay } from "./location_reply.ts";
import { fieldPlan, upstreamFields } from "./set_headers.ts";
import type { UpstreamRegistry } from "./upstream_registry.ts";
import { upstreamUri } from "./upstream_uri.ts";
import { isWebSocketRequest, proxyWebSocket } from "./websocket_proxy.ts";
import { requestTargetText, utf8Bytes } from "./target_text.ts";

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
  /** The client's address. */
  client: string;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /** The declared `Content-Length`, parsed once; `null` when none. */
  contentLength: number | null;
  /**
   * `http://host[:port]` for a rewritten `Location` that starts with `/`;
   * by default `$host` (or the server's address without `Host`) with
   * `$server_port` unless 80, as nginx's header filter builds it.
   */
  origin?: string;
  /** How the body is read whole first (`proxy_request_buffering on`). */
  buffering?: RequestBuffering | undefined;
  /**
   * The path and query to send, decided by the caller
   * (`station_proxy_raw_uri`); nginx's URI rule otherwise.
   */
  target?: string | undefined;
}

/** What proxying gives back to the request flow. */
export type LocationResult =
  | {
    kind: "response";
    /** The upstream's answer, or the 101 of a tunnel. */
    response: Response;
    /** Settles with the bytes relayed when a tunnel closes (its access line waits). */
    tunnel: Promise<number> | null;
  }
  | {
    /**
     * Finalize with this status (error_page applies): 502, 504, 499, 400,
     * 413, or an upstream status intercepted by `proxy_intercept_errors`.
     */
    kind: "status";
    status: number;
    /** The connection is to be closed after the answer (400, a 413 after part of the body). */
    close: boolean;
    /**
     * Fields the answer carries: an intercepted 401 keeps the upstream's
     * `WWW-Authenticate` (`ngx_http_upstream_intercept_errors`).
     */
    headers: [string, string][];
  };

/** What proxying needs from the gateway, made once. */
export interface LocationProxyContext {
  /** The configuration's upstream groups. */
  registry: UpstreamRegistry;
  /** Counters for the status endpoint. */
  stats: FailureCounter;
  /** Shutdown has begun: a body cut off then is not the client leaving. */
  stopping?: () => boolean;
}

const NO_FIELDS: [string, string][] = [];

/**
 * Proxies one request for a location.
 *
 * @param req The client's request.
 * @param request The location, the request's variables and state, its log.
 * @param context The upstream groups and counters.
 * @returns The response, or the status to finalize with.
 * @throws The defect (not an upstream failure) that ended the attempts,
 * once the attempts before it are logged.
 */
export async function proxyLocation(
  req: Request,
  request: LocationRequest,
  context: LocationProxyContext,
): Promise<LocationResult> {
  const { conf, vars, log } = request;
  const pass = conf.proxyPass;
  const group = pass === null ? undefined : context.registry.get(pass.group);
  if (pass === null || group === undefined) {
    throw new TypeError(
      `Cannot proxy in location "${conf.name}": no upstream group "${pass?.group}"`,
    );
  }
  const limit = conf.clientMaxBodySize;
  if (limit > 0 && (request.contentLength ?? 0) > limit) {
    log({
      level: "error",
      message:
        `client intended to send too large body: ${request.contentLength} bytes`,
    });
    return { kind: "status", status: 413, close: false, headers: NO_FIELDS };
  }
  vars.proxyHost = pass.proxyHost;
  // Every part as its UTF-8 bytes: the engine's $uri, $args and
  // $request_uri are text (Deno.serve hands the target over as text), and
  // nginx's URI rule works on the bytes received.
  const path = requestTargetText(
    request.target !== undefined ? utf8Bytes(request.target) : upstreamUri({
      proxyUri: pass.uri,
      locationName: utf8Bytes(request.matchedPrefix ?? conf.name),
      uri: utf8Bytes(vars.uri),
      args: utf8Bytes(vars.args),
      requestUri: utf8Bytes(vars.requestUri),
      uriChanged: request.rewritten,
      internal: request.internal ?? request.rewritten,
      locationInvalid: request.breakInLocation ?? false,
    }),
  );
  const fields = upstreamFields(fieldPlan(conf), vars, req.headers);
  for (const name of fields.unsafe) {
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
  const onFailure = (failure: Parameters<typeof logAttempt>[0]) =>
    logAttempt(failure, log, context.stats);
  const origin = request.origin ?? originOf(req, vars);
  const toResponse = (reply: UpstreamReply) =>
    relay(reply, { conf, vars, origin });
  const common = {
    group,
    upstreamPath: path,
    clientAddress: request.client,
    publicApiBase: "",
    addForwardedHeaders: false,
    clientMaxBodySize: limit,
    contentLength: request.contentLength,
    onFailure,
    headers: fields.passed,
    call: {
      version: conf.proxyHttpVersion,
      leading: fields.set,
      timeouts: conf.proxyTimeouts,
      headBufferSize: conf.proxyBufferSize,
      keepalive: fields.keepalive,
    },
    toResponse,
    buffering: request.buffering ?? null,
  };
  // A tunnel only where the location sends Upgrade and Connection: upgrade
  // (nginx switches when the upstream answers 101 to those, whatever
  // proxy_http_version says).
  const tunnel = fields.upgrade && isWebSocketRequest(req)
    ? Promise.withResolvers<number>()
    : null;
  const result = tunnel
    ? await proxyWebSocket(req, {
      ...common,
      timeouts: conf.proxyTimeouts,
      onClosed: tunnel.resolve,
    })
    : await proxyRequest(req, common);
  return settle(result, { request, context, group, path, tunnel });
}

/** How a forwarding result becomes the flow's result, with its line. */
function settle(
  result: ProxyResult,
  { request, context, group, path, tunnel }: {
    request: LocationRequest;
    context: LocationProxyContext;
    group: UpstreamGroup;
    path: string;
    tunnel: PromiseWithResolvers<number> | null;
  },
): LocationResult {
  const { log } = request;
  if (result.kind === "client-left" && context.stopping?.()) {
    // Deno.serve's shutdown ended the body being read: the client did not
    // leave and must not be told 499. nginx 1.22 closes without an answer;
    // Deno.serve must answer, so the client learns to retry.
    return { kind: "status", status: 503, close: true, headers: NO_FIELDS };
  }
  if (result.kind !== "response") {
    logOutcome(result, {
      log,
      stats: context.stats,
      group: group.name,
      upstreamPath: path,
    });
  }
  switch (result.kind) {
    case "response": {
      const stood = interceptedBy(result.response);
      if (stood !== undefined) {
        return { kind: "status", close: false, ...stood };
      }
      const upgraded = tunnel !== null && result.response.status === 101;
      return {
        kind: "response",
        response: result.response,
        tunnel: upgraded ? tunnel.promise : null,
      };
    }
    case "too-large":
      log({ level: "error", message: result.message });
      return { kind: "status", status: 413, close: true, headers: NO_FIELDS };
    case "no-live":
      return { kind: "status", status: 502, close: false, headers: NO_FIELDS };
    case "bad-body":
      return { kind: "status", status: 400, close: true, headers: NO_FIELDS };
    case "body-timeout":
      // nginx closes without an answer; Deno.serve cannot, so the page.
      return { kind: "status", status: 408, close: true, headers: NO_FIELDS };
    case "temp-failed":
      return { kind: "status", status: 500, close: true, headers: NO_FIELDS };
    case "client-left":
    case "failed":
      return {
        kind: "status",
        status: upstreamStatus(result.error),
        close: false,
        headers: NO_FIELDS,
      };
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
