/**
 * The engine's side of the handler: one request's path through the
 * configuration, read top to bottom in `EngineRoute.serve`. The server its
 * name chooses (`server_choice.ts`), its variables (`request_vars.ts`),
 * the phases that choose its location and content (`request_flow.ts`), the
 * content handler that answers (`static_handler.ts`, `proxy_handler.ts`, or
 * the flow's own `return`), the filters on the answer (SSI in
 * `ssi_includes.ts`, then gzip), and the access logs of the location that
 * answered. Built once from the compiled configuration.
 *
 * @module
 */

import {
  findServer,
  type HttpConf,
  type LocationConf,
  type RequestVars,
  type ServerConf,
} from "../engine/mod.ts";
import {
  fitsInMemory,
  keepsBody,
  releaseKeptBody,
  tunnelClosed,
} from "../proxy/mod.ts";
import type { UpstreamGroup } from "../upstream/mod.ts";
import { filterHeaders, gzipFilter } from "../response/mod.ts";
import type { StaticCache } from "../static/mod.ts";
import { stubStatusResponse } from "../status.ts";
import { AccessGate, endAccess, newAccessState } from "./access_gate.ts";
import { PasswordChecker } from "../access/mod.ts";
import { isValidHost } from "../routing/mod.ts";
import type { FieldNames } from "../runtime/mod.ts";
import type {
  EngineRequest,
  EngineRouteDeps,
  LogScope,
} from "./engine_request.ts";
import type { FlowDeps } from "./flow_types.ts";
import { serveRequest } from "./request_flow.ts";
import { type RefusalStage, refusedVars, requestVars } from "./request_vars.ts";
import { RouteFlow } from "./route_flow.ts";
import { hostName, ServerChoice, withAuthority } from "./server_choice.ts";
import { StaticHandler } from "./static_handler.ts";
import { ProxyHandler } from "./proxy_handler.ts";
import { SsiIncludes } from "./ssi_includes.ts";

/** Where a refused request stands: its socket, its stage, its server. */
type RefusalPlace = {
  socket: { index: number; port: number };
  stage: RefusalStage;
  server: ServerConf;
};

/** The engine's routes, built once. */
export class EngineRoute {
  /** The servers of every listening socket, and where their lines go. */
  readonly #servers: ServerChoice;
  readonly #deps: EngineRouteDeps;
  /** Files, and the file tests of the phases, through one cache. */
  readonly #static: StaticHandler;
  /** Forwarding, with every upstream group. */
  readonly #proxy: ProxyHandler;
  /** The SSI filter and its includes. */
  readonly #ssi: SsiIncludes;
  /**
   * The content handlers, made once: each request's own part comes with
   * its flow (closures per request were garbage per request).
   */
  readonly #flowDeps: FlowDeps;
  /** Some location has `gzip on`: answers go through the gzip filter. */
  readonly #mayGzip: boolean;
  /** The preaccess and access phases, with one password checker for all. */
  readonly #gate: AccessGate;
  /** A location has `limit_conn`: its count is given back after the answer. */
  readonly #mayLimitConn: boolean;
  /** A location has `ssi on`: answers go through the SSI filter. */
  readonly #maySsi: boolean;
  /**
   * Bodies are buffered and a location may redirect with the client's body
   * (its `error_page`, an upstream's `X-Accel-Redirect`: `keepsBody`): a
   * body's temporary file may be kept for the redirect until the answer is
   * chosen, when it does not fit in this buffer; `null` when no file is
   * kept.
   */
  readonly #keepFileAbove: number | null;
  /** Small files in memory, shared by every location. */
  readonly cache: StaticCache;

  /**
   * @param conf The compiled configuration.
   * @param deps The port, counters and logger.
   */
  constructor(conf: HttpConf, deps: EngineRouteDeps) {
    this.#deps = deps;
    this.#servers = new ServerChoice(conf);
    this.#static = new StaticHandler(deps);
    this.cache = this.#static.cache;
    this.#proxy = new ProxyHandler(conf, deps);
    this.#mayGzip = anyLocation(conf, (l) => l.gzip.enabled);
    this.#mayLimitConn = anyLocation(conf, (l) => l.limitConn !== null);
    this.#maySsi = anyLocation(conf, (l) => l.ssi !== undefined);
    this.#keepFileAbove = deps.body?.proxyRequestBuffering === true &&
        anyLocation(conf, keepsBody)
      ? deps.body.clientBodyBufferSize
      : null;
    this.#gate = new AccessGate(new PasswordChecker(), deps.logger);
    this.#flowDeps = {
      handlers: {
        static: (r, content, f) => this.#static.serve(r, content, f),
        proxy: (r, content, f) => this.#proxy.serve(r, content, f),
        stubStatus: (r) =>
          stubStatusResponse(
            r,
            this.#deps.stats,
            this.#deps.connections?.() ?? 0,
          ),
      },
      io: this.#static.io,
      caseless: conf.caseless,
      access: (conf, f) => {
        const flow = f as RouteFlow;
        return this.#gate.run(conf, {
          vars: flow.vars,
          authorization: flow.req.headers.get("authorization"),
          signal: flow.req.signal,
          log: flow.log,
          // Made when a location has access phases: most requests need none.
          // A subrequest's is its main request's (SsiIncludes).
          state: flow.access ??= newAccessState(),
          subrequest: flow.subrequest,
        });
      },
    };
    this.#ssi = new SsiIncludes(this.#flowDeps);
  }

  /** The upstream groups, for shutdown and the status page. */
  get groups(): UpstreamGroup[] {
    return this.#proxy.groups;
  }

  /**
   * Where a request's error lines go before its server is chosen: the
   * default server of its socket (ngx_http_create_request).
   *
   * @param index The socket's index in `listenPorts`.
   * @returns The default server's level and name, made once.
   */
  logScope(index: number): LogScope {
    return this.#servers.logScope(index);
  }

  /**
   * Which request fields are kept by their names: the
   * `underscores_in_headers` and `ignore_invalid_headers` of the server the
   * request's name chooses (see {@linkcode ServerChoice.fieldNames}).
   *
   * @param index The socket's index in `listenPorts`.
   * @param host The request's name (`Host`, or the request line's), `null`
   * when none.
   * @returns The settings; `undefined` at nginx's defaults.
   */
  fieldNames(index: number, host: string | null): FieldNames | undefined {
    return this.#servers.fieldNames(index, host);
  }

  /**
   * Where lines about the request's fields go (a field nginx drops by its
   * name): the server its name chooses (see
   * {@linkcode ServerChoice.hostScope}).
   *
   * @param index The socket's index in `listenPorts`.
   * @param host The request's name, `null` when none.
   * @returns That server's level and name.
   */
  hostScope(index: number, host: string | null): LogScope {
    return this.#servers.hostScope(index, host);
  }

  /**
   * The one place that decides where a request refused before routing is
   * logged: nginx logs it with the configuration current when it gave up,
   * the socket's default server's (ngx_http_create_request) or, once
   * every field is read, the `Host` field's server's
   * (ngx_http_set_virtual_server). Its error lines go to that server's
   * error logs (sets `request.at`); its access line to each of that
   * server's access logs, each in its format, its variables and `if=`
   * read from what nginx had read (no field after a bad request line)
   * (sets `request.accessLogs` and `request.vars`).
   *
   * @param req The request.
   * @param request What the handler read of it.
   * @param where Its socket and how far nginx had read it.
   */
  refused(
    req: Request,
    request: EngineRequest,
    where: { socket: { index: number; port: number }; stage: RefusalStage },
  ): ServerConf {
    const { socket, stage } = where;
    const listen = this.#servers.listen(socket.index);
    const server = stage === "head"
      ? findServer(listen, hostName(request.host)).server
      : listen.defaultServer;
    request.at = this.#servers.scopeOf(socket.index, server);
    if (!this.#deps.logger.accessEnabled) return server;
    request.accessLogs = server.conf.accessLogs;
    // Only a format beyond `combined`'s, or an `if=`, reads them.
    if (!this.#deps.logger.accessNeedsFields) return server;
    request.vars = this.#refusedVars(req, request, { ...where, server });
    return server;
  }

  /**
   * Answers a refused request (after {@linkcode refused}) with the server
   * level's `add_header … always`, as nginx's special response runs with
   * the server's configuration; the gateway's own page as it is when it
   * has none. Its `error_page` is not followed (README,
   * refusal-error-page): the page's request would be made from what the
   * refusal says cannot be read (a `Host` no URL takes, a body and fields
   * nginx never reads).
   *
   * @param req The request.
   * @param request What the handler read of it.
   * @param where Its socket, how far nginx had read it, and the server
   * {@linkcode refused} chose.
   * @param page The gateway's own page for the refusal.
   * @returns The page.
   */
  answerRefusal(
    req: Request,
    request: EngineRequest,
    where: RefusalPlace,
    page: Response,
  ): Response {
    const conf = where.server.conf;
    if (!conf.addHeaders.some((add) => add.always)) return page;
    const vars = request.vars ?? this.#refusedVars(req, request, where);
    request.vars = vars;
    filterHeaders(page.headers, { status: page.status, conf, vars });
    return page;
  }

  /** A refused request's variables, as far as nginx had read it. */
  #refusedVars(
    req: Request,
    request: EngineRequest,
    where: RefusalPlace,
  ): RequestVars {
    return refusedVars(req, request, {
      listen: this.#servers.listen(where.socket.index),
      server: where.server,
      port: where.socket.port,
      // An invalid Host is never the request's (ngx_http_validate_host
      // refuses it before headers_in.server is set): `$host` is the
      // server's name then.
      host: request.host !== null && isValidHost(request.host)
        ? hostName(request.host)
        : "",
      stage: where.stage,
    });
  }

  /** Closes every upstream connection. */
  close(): void {
    this.#proxy.close();
  }

  /**
   * Serves one request.
   *
   * @param req The request.
   * @param request What the handler read of it; the engine sets its
   * `at` (the request's variables once its server is chosen: their
   * `location` is the level whose error logs take its lines),
   * `continued` and `accessLogs`.
   * @param socket Which listening socket it came in on.
   * @returns The response, synchronously when nothing waited.
   */
  serve(
    req: Request,
    request: EngineRequest,
    socket: { index: number; port: number } = {
      index: 0,
      port: this.#deps.port,
    },
  ): Response | Promise<Response> {
    const name = hostName(request.host);
    const listen = this.#servers.listen(socket.index);
    const { server, captures } = findServer(listen, name);
    const vars = requestVars(req, request, {
      listen,
      server,
      port: socket.port,
      host: name,
      headers: listen.ssl ? withAuthority(req.headers, request) : req.headers,
      // The walked fields are the request's own (over TLS, `:authority`
      // may be added as Host).
      fields: listen.ssl ? null : request.clientFields ?? null,
      captures,
      // As its request line says (Deno.serve tells HTTP/2 from 1.x only).
      protocol: request.served2 ? "HTTP/2.0" : "HTTP/1.1",
    });
    request.at = vars;
    request.vars = vars;
    const flow = new RouteFlow(vars, request, req, socket.port, server);
    flow.oneWrite = listen.ssl && !request.served2;
    // Read before anything waits: `Deno.serve` settles the promise only if
    // it was asked for before the exchange ended (a client gone mid-request
    // would otherwise leave a count that is never given back).
    const completed = this.#mayLimitConn ? request.completed : undefined;
    let answered = serveRequest(req, server, flow, this.#flowDeps);
    if (
      this.#keepFileAbove !== null && answered instanceof Promise &&
      !fitsInMemory(request.contentLength, this.#keepFileAbove) &&
      req.method !== "GET" && req.method !== "HEAD"
    ) {
      // Every page is answered by now: a temporary file kept for them is
      // closed once, however the flow ended (nginx's pool cleanup). A GET
      // or HEAD has no body read (Deno.serve gives it none), and a body
      // that fits in memory is never in a file.
      answered = answered.finally(() => releaseKeptBody(flow));
    }
    // Only an access log has lines to choose, only gzip a body to change,
    // only limit_conn a count to give back.
    if (
      !this.#deps.logger.accessEnabled && !this.#mayGzip &&
      !this.#mayLimitConn && !this.#maySsi
    ) {
      return answered;
    }
    return Promise.resolve(answered).then((answer) => {
      const conf = flow.answered;
      if (conf !== undefined && this.#deps.logger.accessEnabled) {
        request.accessLogs = conf.accessLogs;
      }
      if (this.#mayLimitConn) {
        // ngx_http_limit_conn_cleanup: the counts go when the request ends,
        // those its includes take while its body is sent too: the state
        // is made here if no phase made it, for them to share.
        const state = flow.access ??= newAccessState();
        const end = tunnelClosed(answer) ?? completed;
        const release = () => endAccess(state);
        if (end === undefined) release();
        else end.then(release, release);
      }
      // nginx's SSI filter, then gzip, under the location that answered.
      const response = this.#ssi.filter(answer, flow);
      if (!conf?.gzip.enabled) return response;
      // nginx's gzip filter, under the location that answered.
      return gzipFilter(response, {
        conf,
        request: vars,
        head: req.method === "HEAD",
        flush: conf.proxyPass !== null && !conf.proxyBuffering,
      });
    }, (error) => {
      endAccess(flow.access ??= newAccessState());
      throw error;
    });
  }
}

/**
 * Whether any level of any server (its own, a location, a named one, an
 * `if` block) passes a test: a filter no location asks for costs nothing.
 */
function anyLocation(
  conf: HttpConf,
  test: (conf: LocationConf) => boolean,
): boolean {
  const visit = (conf: LocationConf): boolean =>
    test(conf) || [
      ...conf.locations.exact.values(),
      ...conf.locations.prefixes,
      ...conf.locations.regexes,
      ...ifLevels(conf),
    ].some(visit);
  return conf.servers.some((server: ServerConf) =>
    visit(server.conf) || [...server.named.values()].some(visit)
  );
}

/** The levels of a location's `if` blocks. */
function ifLevels(conf: LocationConf): LocationConf[] {
  return (conf.rewrite?.ops ?? []).flatMap((op) =>
    op.op === "if" ? [op.location] : []
  );
}
