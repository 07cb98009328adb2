/**
 * One request through the configuration engine, as nginx runs it: the
 * phases choose the content (`engine/phases.ts`), the content handler
 * answers (`return`, static, proxy), and `error_page` sends an error the
 * gateway made itself through an internal redirect to its page. Failures
 * are logged through the request's `log`; this never throws.
 *
 * @module
 */

import {
  type Content,
  internalRedirect,
  type LocationConf,
  type PhaseIo,
  type PhaseOutcome,
  type PhaseState,
  type RequestVars,
  runPhases,
  type ServerConf,
  uriChangesLeft,
} from "../engine/mod.ts";
import {
  type AccelRedirect,
  accelRedirectOf,
  type RequestEvent,
} from "../proxy/mod.ts";
import { autoindexResponse, contentTypeOf } from "../static/mod.ts";
import {
  type CharsetConf,
  charsetFilter,
  errorResponse,
  filterHeaders,
  hasHeadersFilter,
  isBuiltInError,
  redirectLocation,
} from "../response/mod.ts";
import { osErrorOf, textBytes } from "../runtime/mod.ts";

/** The content handlers the flow hands a decision to. */
export interface ContentHandlers {
  /** Serves a file, or answers its absence, under a location's settings. */
  static(
    req: Request,
    content: Extract<Content, { kind: "static" }>,
    request: FlowRequest,
  ): Response | Promise<Response>;
  /** Forwards upstream under a location's settings. */
  proxy(
    req: Request,
    content: Extract<Content, { kind: "proxy" }>,
    request: FlowRequest,
  ): Promise<Response>;
  /** `stub_status`: the counts page (GET and HEAD; 405 otherwise). */
  stubStatus(req: Request): Response;
}

/** One request's part in the flow. */
export interface FlowRequest {
  /** The request's variables; the phases change `$uri` and `$args`. */
  vars: RequestVars;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /**
   * The origin absolute redirects name (`http://host:port`), as nginx's
   * `absolute_redirect on` with `server_name_in_redirect off`.
   */
  origin: string;
  /** Set by the flow: the location that answered, for the log phase. */
  answered?: LocationConf;
  /**
   * Set by the flow while an `error_page` is answered: the status the page
   * goes out with (nginx's `r->err_status`), which is the one the headers
   * filter sees (ngx_http_send_header), not the page's own 200.
   */
  errStatus?: number;
}

/** What the flow needs, fixed at start-up. */
export interface FlowDeps {
  /** The content handlers. */
  handlers: ContentHandlers;
  /** File tests for `try_files`, `index` and `if (-f …)`. */
  io: PhaseIo;
  /** Compare URIs with locations without regard to case. */
  caseless: boolean;
  /**
   * The preaccess and access phases of a location (`access_gate.ts`):
   * `null` to go on, or the refusal to finalize with.
   */
  access?: (
    conf: LocationConf,
    request: FlowRequest,
  ) => Promise<Extract<Content, { kind: "status" }> | null>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** What an error page's request does not carry (see `errorPage`). */
const PAGE_IGNORED = [
  "if-none-match",
  "if-modified-since",
  "if-match",
  "if-unmodified-since",
  "range",
  "if-range",
];

/**
 * `return code [text]` (ngx_http_script_return_code): an error code
 * without text is nginx's own page (and `error_page` applies); a redirect
 * code takes the text as `Location` on nginx's page; any other code sends
 * the text, empty or not, typed by the URI's extension or `default_type`
 * (ngx_http_send_response). A 204 has neither body nor type.
 */
function returnResponse(
  req: Request,
  content: Extract<Content, { kind: "return" }>,
  request: FlowRequest,
): Response {
  const head = req.method === "HEAD";
  const { code, text } = content;
  if (REDIRECTS.has(code)) {
    return errorResponse(code, {
      head,
      ...(text === null
        ? {}
        : { headers: { location: redirectLocation(text, request.origin) } }),
    });
  }
  if (text === null && code >= 400) return errorResponse(code, { head });
  if (code === 204) return new Response(null, { status: 204 });
  // The text's bytes as nginx holds them (a field's bytes that are not
  // UTF-8 go back as they came).
  const bytes = textBytes(text ?? "");
  return new Response(head ? null : bytes, {
    status: code,
    headers: {
      "content-type": contentTypeOf(request.vars.uri, content.conf),
      "content-length": String(bytes.length),
    },
  });
}

/**
 * Answers one decision of the phases; `expires` and `add_header` of the
 * location apply to what the phases answer themselves, as nginx's headers
 * filter runs on every response (the static and proxy handlers apply them
 * to theirs).
 */
function answer(
  req: Request,
  content: Content,
  request: FlowRequest,
  handlers: ContentHandlers,
): Response | Promise<Response> {
  const response = decide(req, content, request, handlers);
  if (content.kind === "static" || content.kind === "proxy") return response;
  // A folder's listing is read from disk; every other answer is at hand.
  if (response instanceof Promise) {
    return response.then((done) => filtered(done, content, request));
  }
  return filtered(response, content, request);
}

/** The charset and headers filters on an answer the phases made. */
function filtered(
  done: Response,
  content: Content,
  request: FlowRequest,
): Response {
  if (content.conf.charset !== null) withCharset(done, content.conf);
  if (hasHeadersFilter(content.conf)) {
    filterHeaders(done.headers, {
      status: filterStatus(done, request),
      conf: content.conf,
      vars: request.vars,
    });
  }
  return done;
}

/**
 * The status nginx's headers filter sees for a response: an error page's
 * status (`r->err_status`, which ngx_http_send_header puts in place of the
 * page's own) unless the gateway made the response itself, as a page that
 * fails is finalized with its own error.
 *
 * @param response The answer.
 * @param request The request, with `errStatus` while an error page is answered.
 * @returns The status for `add_header` and `expires`.
 */
export function filterStatus(response: Response, request: FlowRequest): number {
  return request.errStatus === undefined || isBuiltInError(response)
    ? response.status
    : request.errStatus;
}

/**
 * The charset filter on an answer the gateway made (nginx's pages get
 * `; charset=…` too when `charset` is set).
 *
 * @param response The answer; its fields change in place.
 * @param conf The location.
 */
export function withCharset(response: Response, conf: CharsetConf): void {
  const type = response.headers.get("content-type");
  const typed = charsetFilter(type, response.status, conf);
  if (typed !== null && typed !== type) {
    response.headers.set("content-type", typed);
  }
}

function decide(
  req: Request,
  content: Content,
  request: FlowRequest,
  handlers: ContentHandlers,
): Response | Promise<Response> {
  const head = req.method === "HEAD";
  switch (content.kind) {
    case "return":
      return returnResponse(req, content, request);
    case "status":
      if (content.message !== undefined) {
        request.log({ level: "error", message: content.message });
      }
      if (content.notFound !== undefined) {
        const osError = osErrorOf(new Deno.errors.NotFound());
        request.log({
          level: "error",
          message: `"${content.notFound}" is not found`,
          ...(osError ? { osError } : {}),
        });
      }
      return errorResponse(
        content.code,
        content.headers === undefined
          ? { head }
          : { head, headers: content.headers },
      );
    case "slash": {
      const { vars } = request;
      const location = `${vars.uri}/${vars.args === "" ? "" : `?${vars.args}`}`;
      return errorResponse(301, {
        head,
        headers: { location: redirectLocation(location, request.origin) },
      });
    }
    case "index-forbidden":
      if (
        content.conf.autoindex !== undefined && (head || req.method === "GET")
      ) {
        return listFolder(content, request, head);
      }
      request.log({
        level: "error",
        message: `directory index of "${content.path}" is forbidden`,
      });
      return errorResponse(403, { head });
    case "static":
      return handlers.static(req, content, request);
    case "proxy":
      return handlers.proxy(req, content, request);
    case "stub-status":
      return handlers.stubStatus(req);
  }
}

/** `autoindex on`: the folder's listing, or nginx's error and line. */
async function listFolder(
  content: Extract<Content, { kind: "index-forbidden" }>,
  request: FlowRequest,
  head: boolean,
): Promise<Response> {
  const { response, failures } = await autoindexResponse({
    path: content.path,
    uri: request.vars.uri,
    conf: content.conf.autoindex!,
    charset: content.conf.charset,
    head,
  });
  for (const failure of failures) {
    const osError = osErrorOf(failure.error);
    request.log({
      level: failure.level,
      message: failure.message,
      ...(osError ? { osError } : {}),
    });
  }
  return response;
}

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
  where: {
    server: ServerConf;
    conf: LocationConf;
    state: PhaseState;
    kind: Content["kind"];
  },
  ctx: { request: FlowRequest; deps: FlowDeps },
): Promise<Response> | null {
  const accel = where.kind === "proxy" ? accelRedirectOf(done) : undefined;
  return accel === undefined ? null : redirectForAccel(req, accel, where, ctx);
}

/**
 * An internal redirect to an `X-Accel-Redirect`'s URI or named location,
 * as GET unless the request is a HEAD; a URI nginx finds unsafe is a 404.
 * The answer keeps the upstream's fields nginx keeps: its `Content-Type`
 * unless the answer is an error page or a proxied one with its own, the
 * others added.
 */
async function redirectForAccel(
  req: Request,
  accel: AccelRedirect,
  where: { server: ServerConf; conf: LocationConf; state: PhaseState },
  ctx: { request: FlowRequest; deps: FlowDeps },
): Promise<Response> {
  const { request, deps } = ctx;
  const head = req.method === "HEAD";
  const { target } = accel;
  if (target.kind === "unsafe") {
    return errorPage(req, errorResponse(404, { head }), where, ctx);
  }
  const method = head ? "HEAD" : "GET";
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
  const next = new Request(req.url, { method, headers: req.headers });
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
 * `=code` says otherwise. Once per request unless `recursive_error_pages`.
 */
async function errorPage(
  req: Request,
  response: Response,
  where: { server: ServerConf; conf: LocationConf; state: PhaseState },
  ctx: { request: FlowRequest; deps: FlowDeps },
): Promise<Response> {
  const { request, deps } = ctx;
  let current = response;
  let conf = where.conf;
  let redirected = false;
  let challenge: string | null = null;
  // Each pass that goes on redirects once, which counts one of nginx's URI
  // changes: past the last, the redirect is nginx's 500 and its cycle line,
  // and no error page follows (`uriChangesLeft`). A bound of its own below
  // that ended a loop of `recursive_error_pages` with the last page's
  // status and no line.
  for (;;) {
    const target = conf.errorPages.get(current.status);
    if (
      target === undefined || (redirected && !conf.recursiveErrorPages) ||
      !uriChangesLeft(where.state)
    ) {
      return current;
    }
    const uri = target.uri.evaluate(request.vars);
    const status = current.status;
    // auth_basic's challenge stays in r->headers_out through the redirect.
    challenge ??= current.headers.get("www-authenticate");
    await current.body?.cancel();
    if (!uri.startsWith("/") && !uri.startsWith("@")) {
      // A URL: nginx answers 302 (or the `=code` given) with Location.
      const code = target.overwrite !== null && REDIRECTS.has(target.overwrite)
        ? target.overwrite
        : 302;
      return errorResponse(code, {
        head: req.method === "HEAD",
        headers: challenge === null
          ? { location: redirectLocation(uri, request.origin) }
          : {
            location: redirectLocation(uri, request.origin),
            "www-authenticate": challenge,
          },
      });
    }
    redirected = true;
    const method = req.method === "HEAD" ? "HEAD" : "GET";
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
    // nginx's filters see the error's status (r->err_status): no 304 and
    // no range for the page, so the page request carries neither asks.
    const headers = new Headers(req.headers);
    for (const name of PAGE_IGNORED) headers.delete(name);
    const pageReq = new Request(req.url, { method, headers });
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
      if (answered.status === 404 && where.conf.errorPageFallback) {
        // The page is missing: the built-in configuration keeps the error.
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
    const code = target.overwrite === null
      ? status
      : target.overwrite === 0
      ? answered.status
      : target.overwrite;
    if (code === answered.status && challenge === null) return answered;
    const fields = new Headers(answered.headers);
    if (challenge !== null) fields.set("www-authenticate", challenge);
    if (code === answered.status) {
      return new Response(answered.body, { status: code, headers: fields });
    }
    // ngx_http_header_filter keeps Last-Modified only for 200, 206 and 304;
    // Accept-Ranges is the range filter's, for 200 only.
    fields.delete("last-modified");
    fields.delete("accept-ranges");
    return new Response(answered.body, { status: code, headers: fields });
  }
}
