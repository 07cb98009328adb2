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
 * to the access line; a tunnel's end is found by `tunnelClosed`
 * (`location_forward.ts`).
 *
 * @module
 */

import { fieldBytes } from "../runtime/mod.ts";
import { errorResponse } from "../response/mod.ts";
import type { UpstreamGroup } from "../upstream/mod.ts";
import { proxyRequest } from "./proxy.ts";
import {
  LocationForward,
  type LocationProxyContext,
} from "./location_forward.ts";
import type { LocationRequest } from "./pass_forward.ts";
import { fieldPlan, upstreamFields } from "./set_headers.ts";
import { groupOf, parseProxyUrl } from "./proxy_url.ts";
import { rawUpstreamUri, upstreamUri } from "./upstream_uri.ts";
import { isWebSocketRequest, proxyWebSocket } from "./websocket_proxy.ts";
import { requestTargetText } from "./target_text.ts";

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
  if (
    request.contentLength === 0 &&
    !(request.keeper?.keptBody instanceof Uint8Array)
  ) {
    // nginx sends the declared length of an empty body
    // ($proxy_internal_body_length); the body plan sends none. A redirect
    // that sends kept bytes, empty ones too (a chunked body read whole),
    // is framed by the upstream client itself: one `Content-Length` line.
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
      ...(context.upgradeWebSocket
        ? { upgrade: context.upgradeWebSocket }
        : {}),
    })
    : proxyRequest(req, forwarding);
  // The reaction holds the forwarding, not the request's own object, which
  // then need not outlive it.
  return forwarded.then((result) => forwarding.settle(result));
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
