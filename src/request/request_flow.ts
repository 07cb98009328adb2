/**
 * One request through the configuration engine, as nginx runs it: the
 * phases choose the content (`engine/phases.ts`), the content is answered
 * (`content_answer.ts`: `return`, static, proxy), an upstream's
 * `X-Accel-Redirect` is followed, and `error_page` sends an error the
 * gateway made itself through an internal redirect to its page
 * (`error_page.ts`). Each redirect runs the phases again, so the loop is
 * here, in one file. Failures are logged through the request's `log`;
 * this never throws.
 *
 * @module
 */

import {
  type Content,
  internalRedirect,
  type LocationConf,
  type PhaseOutcome,
  type PhaseState,
  runPhases,
  type ServerConf,
  uriChangesLeft,
} from "../engine/mod.ts";
import {
  type AccelRedirect,
  accelRedirectOf,
  keptUpstream,
} from "../proxy/mod.ts";
import {
  errorResponse,
  errorStatus,
  isBuiltInError,
  makeResponse,
} from "../response/mod.ts";
import { dropsKeepalive } from "../closing_connections.ts";
import { answer } from "./content_answer.ts";
import { errorPageUrl, pageRequest } from "./error_page.ts";
import type { FlowDeps, FlowRequest } from "./flow_types.ts";
import { derivedRequest } from "../runtime/mod.ts";

/**
 * Runs a request through the engine. Synchronous while nothing waits (no
 * access phase, an answer at hand): a static answer from memory costs no
 * promise.
 *
 * @param req The request.
 * @param server The server chosen for it.
 * @param request Its variables, log and origin.
 * @param deps The content handlers and file access.
 * @returns The response.
 */
export function serveRequest(
  req: Request,
  server: ServerConf,
  request: FlowRequest,
  deps: FlowDeps,
): Response | Promise<Response> {
  return serveFrom(req, { server, request, deps, internal: false });
}

/**
 * Runs a subrequest (SSI's `include`) through the engine: an internal
 * request, so `internal` locations answer it. Its preaccess and access
 * phases run through `deps.access` as the main request's do, which knows
 * it for a subrequest (its flow says so): the limits count once for the
 * main request, and no access phase runs (ngx_http_core_access_phase),
 * on every way it takes (its `error_page`, an `X-Accel-Redirect`).
 *
 * @param req The subrequest (GET, the main request's fields).
 * @param server The main request's server.
 * @param request Its variables, log and origin.
 * @param deps The content handlers and file access.
 * @returns The response, whose body is what the subrequest sends.
 */
export function serveSubrequest(
  req: Request,
  server: ServerConf,
  request: FlowRequest,
  deps: FlowDeps,
): Response | Promise<Response> {
  return serveFrom(req, { server, request, deps, internal: true });
}

/** The phases from the server's level, then the content's answer. */
function serveFrom(
  req: Request,
  ctx: {
    server: ServerConf;
    request: FlowRequest;
    deps: FlowDeps;
    internal: boolean;
  },
): Response | Promise<Response> {
  const { server, request, deps } = ctx;
  const state: PhaseState = {
    cycles: 0,
    internal: ctx.internal,
    caseless: deps.caseless,
    body: request.declared,
  };
  const phases = runPhases(server, request.vars, { state, io: deps.io });
  if (phases.kind === "access") {
    return throughAccess(phases, request, deps).then((first) =>
      answerFirst(req, first, { server, state, request, deps })
    );
  }
  return answerFirst(req, phases, { server, state, request, deps });
}

/** The content's answer, then `error_page` for an error the gateway made. */
function answerFirst(
  req: Request,
  first: Content,
  ctx: {
    server: ServerConf;
    state: PhaseState;
    request: FlowRequest;
    deps: FlowDeps;
  },
): Response | Promise<Response> {
  const { request, deps } = ctx;
  request.answered = first.conf;
  const response = answer(req, first, request, deps.handlers);
  const where = {
    server: ctx.server,
    conf: first.conf,
    state: ctx.state,
    kind: first.kind,
  };
  if (response instanceof Promise) {
    return response.then((done) =>
      followAccel(req, done, where, ctx) ??
        (isBuiltInError(done) ? errorPage(req, done, where, ctx) : done)
    );
  }
  if (!isBuiltInError(response)) return response;
  return errorPage(req, response, where, ctx);
}

/** Where a flow stands: its server, the location answering, its state. */
type FlowPlace = { server: ServerConf; conf: LocationConf; state: PhaseState };

/** The request's part in the flow and what the flow needs. */
type FlowContext = { request: FlowRequest; deps: FlowDeps };

/**
 * An upstream's `X-Accel-Redirect` (ngx_http_upstream_process_headers),
 * followed, or `null` when the answer is not its stand-in. Only a proxied
 * answer can be one.
 *
 * @param req The request the answer is for.
 * @param done The content's answer.
 * @param where Where it was answered, and by which kind of content.
 * @param ctx The request and the flow's dependencies.
 * @returns The redirect's answer, or `null`.
 */
function followAccel(
  req: Request,
  done: Response,
  where: FlowPlace & { kind: Content["kind"] },
  ctx: FlowContext,
): Promise<Response> | null {
  const accel = where.kind === "proxy" ? accelRedirectOf(done) : undefined;
  if (accel === undefined) return null;
  keepUpstream(done, ctx.request);
  return redirectForAccel(req, accel, where, ctx);
}

/**
 * nginx keeps `r->upstream` through an internal redirect: every line the
 * request writes after an `X-Accel-Redirect` or an error page of a
 * proxied answer names the server last tried (ngx_http_log_error_handler).
 * The one place the flow carries it into the request's lines.
 */
function keepUpstream(answer: Response, request: FlowRequest): void {
  const upstream = keptUpstream(answer);
  if (upstream !== undefined) request.keepUpstream?.(upstream);
}

/**
 * An internal redirect to an `X-Accel-Redirect`'s URI, as GET unless the
 * request is a HEAD, or to its named location with the request's method;
 * a URI nginx finds unsafe is a 404.
 * The answer keeps the upstream's fields nginx keeps: its `Content-Type`
 * unless the answer is an error page or a proxied one with its own, the
 * others added.
 */
async function redirectForAccel(
  req: Request,
  accel: AccelRedirect,
  where: FlowPlace,
  ctx: FlowContext,
): Promise<Response> {
  const { request, deps } = ctx;
  const head = req.method === "HEAD";
  const { target } = accel;
  if (target.kind === "unsafe") {
    return errorPage(req, errorResponse(404, { head }), where, ctx);
  }
  // ngx_http_upstream_process_headers makes the method GET (HEAD stays)
  // for a URI only: a named location is asked with the client's method.
  const method = target.kind === "named" ? req.method : head ? "HEAD" : "GET";
  request.vars.method = method;
  const redirect = target.kind === "named"
    ? internalRedirect(where.server, request.vars, target.name, {
      from: where.conf,
      state: where.state,
      io: deps.io,
    })
    : internalRedirect(where.server, request.vars, target.uri, {
      from: where.conf,
      state: where.state,
      io: deps.io,
      args: target.args,
    });
  const content = redirect.kind === "access"
    ? await throughAccess(redirect, request, deps)
    : redirect;
  const next = derivedRequest(req.url, { method, headers: req.headers });
  const answered = await answerFirst(next, content, {
    server: where.server,
    state: where.state,
    request,
    deps,
  });
  const fields = answered.headers;
  for (const [name, value] of accel.fields) {
    if (name === "content-type") {
      if (isBuiltInError(answered)) continue;
      if (content.kind === "proxy" && fields.has(name)) continue;
      fields.set(name, value);
    } else if (name === "set-cookie") fields.append(name, value);
    else if (!fields.has(name)) fields.set(name, value);
  }
  return answered;
}

/**
 * Runs the preaccess and access phases each location asks for until the
 * content is chosen or a phase refuses. Bounded: a location after the
 * first is reached only through an internal redirect, at most ten.
 */
async function throughAccess(
  outcome: PhaseOutcome,
  request: FlowRequest,
  deps: FlowDeps,
): Promise<Content> {
  while (outcome.kind === "access") {
    const refused = await deps.access?.(outcome.conf, request) ?? null;
    if (refused !== null) return refused;
    outcome = outcome.resume();
  }
  return outcome;
}

/**
 * `error_page` for an error the gateway made (ngx_http_send_error_page): a
 * URL is a 302 to it; a URI or `@name` is an internal redirect (a method
 * other than HEAD becomes GET), answered with the error's status unless
 * `=code` says otherwise. Once per request unless `recursive_error_pages`
 * is on in every location whose error found its page so far.
 */
async function errorPage(
  req: Request,
  response: Response,
  where: FlowPlace,
  ctx: FlowContext,
): Promise<Response> {
  const { request, deps } = ctx;
  let current = response;
  let conf = where.conf;
  // nginx's `r->error_page`: set by the first location whose error finds
  // its pages with `recursive_error_pages` off, and never cleared, so a
  // later page location's `on` cannot reopen the chain
  // (ngx_http_special_response_handler).
  let closed = false;
  let challenge: string | null = null;
  // Each pass that goes on redirects once, which counts one of nginx's URI
  // changes: past the last, the redirect is nginx's 500 and its cycle line,
  // and no error page follows (`uriChangesLeft`). A bound of its own below
  // that ended a loop of `recursive_error_pages` with the last page's
  // status and no line.
  for (;;) {
    if (closed || !uriChangesLeft(where.state)) return current;
    // 494-497 find their own page, not 400's (r->err_status).
    const status = errorStatus(current);
    const target = conf.errorPages.get(status);
    if (target === undefined) return current;
    closed = !conf.recursiveErrorPages;
    const uri = target.uri.evaluate(request.vars);
    // ngx_http_special_response_handler drops keep-alive before it looks
    // for the page: the page answers, then the connection ends.
    if (isBuiltInError(current) && dropsKeepalive(status)) {
      request.dropKeepalive?.();
    }
    // auth_basic's challenge stays in r->headers_out through the redirect.
    challenge ??= current.headers.get("www-authenticate");
    keepUpstream(current, request);
    await current.body?.cancel();
    if (!uri.startsWith("/") && !uri.startsWith("@")) {
      return errorPageUrl(uri, {
        overwrite: target.overwrite,
        head: req.method === "HEAD",
        origin: request.origin,
        challenge,
      });
    }
    // ngx_http_send_error_page: a URI page is asked for with GET (HEAD
    // stays), a named location with the request's own method.
    const method = uri.startsWith("@") || req.method === "HEAD"
      ? req.method
      : "GET";
    request.vars.method = method;
    const redirect = internalRedirect(where.server, request.vars, uri, {
      from: conf,
      state: where.state,
      io: deps.io,
      // ngx_http_send_error_page: the page's own `?` part, or no args.
      ownArgs: target.uri.constant === null ? "empty" : "none",
    });
    const page = redirect.kind === "access"
      ? await throughAccess(redirect, request, deps)
      : redirect;
    const pageReq = pageRequest(req, method);
    // `=` alone answers with the page's own status (err_status 0).
    if (target.overwrite === 0) delete request.errStatus;
    else request.errStatus = target.overwrite ?? status;
    let answered = await answer(pageReq, page, request, deps.handlers);
    // A proxied page may be an X-Accel-Redirect too.
    const followed = followAccel(pageReq, answered, {
      server: where.server,
      conf: page.conf,
      state: where.state,
      kind: page.kind,
    }, ctx);
    if (followed !== null) answered = await followed;
    conf = request.answered = page.conf;
    if (isBuiltInError(answered)) {
      if (
        (answered.status === 404 || answered.status === 403) &&
        where.conf.errorPageFallback
      ) {
        // The page is missing, or refused (its name leads outside the root,
        // it may not be read; its line is written): the built-in
        // configuration keeps the error.
        await answered.body?.cancel();
        return errorResponse(status, { head: req.method === "HEAD" });
      }
      // nginx's own page for the page's error keeps the challenge too.
      if (challenge !== null) {
        answered.headers.set("www-authenticate", challenge);
      }
      current = answered;
      continue;
    }
    // A file page under `=200` went through nginx's range and not-modified
    // filters after r->err_status set its 200 (ngx_http_send_header): their
    // 206 or 304 stands.
    const filtered = target.overwrite === 200 && page.kind === "static" &&
      (answered.status === 206 || answered.status === 304);
    const code = target.overwrite === null
      ? status
      : target.overwrite === 0 || filtered
      ? answered.status
      : target.overwrite;
    if (code === answered.status && challenge === null) return answered;
    const fields = new Headers(answered.headers);
    if (challenge !== null) fields.set("www-authenticate", challenge);
    if (code === answered.status) {
      return makeResponse(answered.body, { status: code, headers: fields });
    }
    // ngx_http_header_filter keeps Last-Modified only for 200, 206 and 304;
    // Accept-Ranges is the range filter's, for 200 only. A 204, 205 or 304
    // goes without the page's body (make_response.ts).
    if (code !== 304) fields.delete("last-modified");
    fields.delete("accept-ranges");
    return makeResponse(answered.body, { status: code, headers: fields });
  }
}
