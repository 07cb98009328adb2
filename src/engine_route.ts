/**
 * The handler's side for a configuration run by the engine: the server for
 * the request's `Host`, its variables, the phases and the content handlers
 * (`request_flow.ts`), built once from the compiled configuration.
 *
 * @module
 */

import {
  type AccessLogConf,
  type Content,
  findServer,
  groupByListen,
  type HttpConf,
  type ListenGroup,
  type LocationConf,
  type PhaseIo,
  type RequestVars,
  type ServerConf,
} from "./engine/mod.ts";
import type { ErrorTarget, Logger, UpstreamTries } from "./log/mod.ts";
import {
  type LocationProxyContext,
  type LocationRequest,
  proxyLocation,
  relayedUpstream,
  type RequestBuffering,
  type RequestEvent,
  tunnelClosed,
  UpstreamRegistry,
} from "./proxy/mod.ts";
import {
  type ContentHandlers,
  filterStatus,
  type FlowDeps,
  type FlowRequest,
  serveRequest,
  serveSubrequest,
  withCharset,
} from "./request_flow.ts";
import {
  serveFile,
  type ServeFileOptions,
  StaticCache,
  type StaticResult,
} from "./static/mod.ts";
import { BodyDeadlines, TempFiles } from "./proxy/mod.ts";
import {
  errorResponse,
  filterHeaders,
  gzipFilter,
  hasHeadersFilter,
  publicOrigin,
} from "./response/mod.ts";
import { ssiFilter, SsiStore } from "./ssi/mod.ts";
import {
  type IncludeBudget,
  MAX_INCLUDE_DEPTH,
  MAX_INCLUDES,
  Subrequest,
} from "./subrequest.ts";
import { type GatewayStats, stubStatusResponse } from "./status.ts";
import {
  type FastcgiContext,
  fastcgiLocation,
  fastcgiRegistry,
} from "./fastcgi/mod.ts";
import { AccessGate, type AccessState } from "./access_gate.ts";
import { PasswordChecker } from "./access/mod.ts";
import {
  type TransportFactory,
  UpstreamError,
  type UpstreamGroup,
} from "./upstream/mod.ts";
import {
  expectsContinue,
  type FieldsRead,
  isValidHost,
  READING_HEADERS,
} from "./routing/mod.ts";
import { type RefusalStage, refusedVars, requestVars } from "./request_vars.ts";
import type { FieldNames } from "./runtime/mod.ts";

export type { RefusalStage };

/**
 * Where a request's error lines go, as nginx switches `r->connection->log`:
 * the location chosen so far (the request's variables, from the server's
 * choice on: `engine/phases.ts` sets it wherever nginx calls
 * ngx_http_update_location_config), before that its socket's default
 * server (ngx_http_create_request); the `server:` field is the same
 * server's name (ngx_http_log_error_handler reads `r->srv_conf`).
 */
export interface LogScope {
  /**
   * The level whose error logs take the lines (and whose access logs a
   * request refused before routing writes to).
   */
  readonly location?: {
    readonly errorLogs: readonly ErrorTarget[];
    readonly accessLogs?: readonly AccessLogConf[];
  };
  /** The `server:` field. */
  readonly serverName: string;
}

/** The longest a request waits for the folders on its path to settle. */
const MAX_SETTLE_WAIT_MS = 2500;

/** What the engine's side needs from the gateway. */
export interface EngineRouteDeps {
  /** The port bound, for redirects. */
  port: number;
  /** Counters for the status endpoint and `stub_status`. */
  stats: GatewayStats;
  /** Client connections seen since start, for `stub_status`. */
  connections?: () => number;
  /** Called for every new upstream connection. */
  onConnect?: () => void;
  /** Where lines go. */
  logger: Logger;
  /** Makes each upstream server's transport (in-process tests). */
  transport?: TransportFactory;
  /** The upstream groups' clock in milliseconds (tests). */
  now?: () => number;
  /**
   * How request bodies are read before forwarding (nginx's
   * `proxy_request_buffering`, `client_body_*`), for every location.
   */
  body?: {
    proxyRequestBuffering: boolean;
    clientBodyBufferSize: number;
    clientBodyTimeoutMs: number;
    clientBodyTempPath: string;
  };
  /** Shutdown has begun: a body cut off then is not the client leaving. */
  stopping?: () => boolean;
  /** The page `station_default_page` shows, for a client's address. */
  defaultPage?: (req: Request, client: string) => Promise<Response>;
}

/** One request as the handler has read it. */
export interface EngineRequest {
  /** The client's address and port. */
  client: string;
  /** The client's port. */
  clientPort: number;
  /** `Host`, or `null`. */
  host: string | null;
  /** The raw target. */
  target: string;
  /** The client's fields as the handler's one walk read them. */
  readonly fields: FieldsRead;
  /** `$uri` and `$args`. */
  uri: string;
  /** `$args`. */
  args: string;
  /** The declared body length, or `null`. */
  contentLength: number | null;
  /** The declared length's digits, for the 413 line. */
  lengthDigits: string | null;
  /**
   * A GET or HEAD that declared a body: `Deno.serve` hands the handler no
   * body for them, so it cannot be forwarded (refused, not sent without).
   */
  readonly bodyInGet: boolean;
  /** Where the proxy records its upstream tries for the access line. */
  tries: UpstreamTries | null;
  /**
   * The client's fields as the head's check walked them (flat: name,
   * value…), so the proxy need not walk them again; `null` when not known.
   */
  clientFields?: readonly string[] | null;
  /**
   * Served over HTTP/2 on a TLS socket: its answer is not framed to be
   * written in one piece (`response/tls_one_write.ts`).
   */
  readonly served2: boolean;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /**
   * The request's clock in ms, read once when it arrived (the shared
   * `stat` of a file, `expires`); `undefined` once the request has waited,
   * and then read per use.
   */
  readonly now?: number | undefined;
  /**
   * Settles when the response has been sent (or the client went away):
   * `limit_conn` counts the request until then. Read only then, and before
   * anything waits: reading `Deno.ServeHandlerInfo.completed` makes a
   * promise, which `Deno.serve` settles only if asked for before the
   * exchange ended.
   */
  readonly completed?: Promise<void>;
  /**
   * Set by the engine once the server is chosen: the request's variables,
   * whose level takes its error lines (see {@linkcode LogScope}).
   */
  at: LogScope;
  /**
   * Set by the engine when the request is forwarded: `Deno.serve` sent
   * `100 Continue` on the first read of its body.
   */
  continued: boolean;
  /**
   * Set by the engine when an access log is written: the logs of the
   * location that answered (empty: no line, as `access_log off`); their
   * `if=` is evaluated when the line is written. `null` until then.
   */
  accessLogs: readonly AccessLogConf[] | null;
  /**
   * Set by the engine once the server is chosen (or the request refused
   * before routing): the variables its access line reads.
   */
  vars: RequestVars | null;
}

/** The last `Host` asked for and its name: most requests name the same. */
let lastHost: string | null = null;
let lastName = "";

/** `$host`: the `Host` name without port, lower case (ngx_http_validate_host). */
function hostName(host: string | null): string {
  if (host === null || host === "") return "";
  if (host === lastHost) return lastName;
  lastName = nameOf(host);
  lastHost = host;
  return lastName;
}

/** The name of a `Host` that is not empty. */
function nameOf(host: string): string {
  const end = host.startsWith("[")
    ? host.indexOf("]") + 1
    : host.lastIndexOf(":") < 0
    ? host.length
    : host.lastIndexOf(":");
  const name = host.slice(0, end).toLowerCase();
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/**
 * An HTTP/2 request's fields with its `:authority` as `Host`, as nginx
 * makes it (`ngx_http_v2_parse_authority`), so `$http_host` and a folder's
 * redirect see it; other requests' fields as they are (no copy). Whether
 * `Host` was sent is known from the handler's walk of the fields (a `has`
 * was a scan of them per request).
 */
function withAuthority(headers: Headers, request: EngineRequest): Headers {
  const host = request.host;
  if (host === null || request.fields.host !== null) return headers;
  const copy = new Headers(headers);
  copy.set("host", host);
  return copy;
}

/** The engine's routes, built once. */
export class EngineRoute {
  readonly #conf: HttpConf;
  /** The listening sockets' servers, one entry per port (see `listenPorts`). */
  readonly #listens: ListenGroup[];
  /** Every upstream group, made once (`upstream {}` and `proxy_pass host:port`). */
  readonly #registry: UpstreamRegistry;
  readonly #deps: EngineRouteDeps;
  /**
   * How bodies are read whole before forwarding, made once; `undefined`
   * when they are streamed.
   */
  readonly #buffering: RequestBuffering | undefined;
  /** `client_body_timeout` of every body being read: one interval. */
  readonly #bodyDeadlines = new BodyDeadlines();
  readonly #static: ContentHandlers["static"];
  /**
   * File tests of `try_files`, `index` and `if (-f …)`, through the static
   * cache's `stat`: the file handler's own `stat` of the same path in the
   * same millisecond is then no second system call (the first system call
   * of a request was a fifth of a cached static answer's CPU, profiled).
   */
  readonly #io: PhaseIo = {
    fileKind: (path) => kindOf(this.cache.stat(path)),
  };
  /** Some location has `gzip on`: answers go through the gzip filter. */
  readonly #mayGzip: boolean;
  /** What proxying needs from the gateway, made once. */
  readonly #proxyContext: LocationProxyContext;
  /** What FastCGI needs, made once; `null` when nothing passes to it. */
  readonly #fastcgiContext: FastcgiContext | null;
  /** Small files in memory, shared by every location. */
  readonly cache: StaticCache = new StaticCache();
  /** The preaccess and access phases, with one password checker for all. */
  readonly #gate: AccessGate;
  /** A location has `limit_conn`: its count is given back after the answer. */
  readonly #mayLimitConn: boolean;
  /** A location has `ssi on`: answers go through the SSI filter. */
  readonly #maySsi: boolean;
  /** Each listening port's default server, whose error logs take lines before a server is chosen. */
  readonly #logScopes: readonly LogScope[];
  /** Per socket: whether a server sets `underscores_in_headers` or `ignore_invalid_headers`. */
  readonly #fieldNamesSet: readonly boolean[];

  /**
   * @param conf The compiled configuration.
   * @param deps The port, counters and logger.
   */
  constructor(conf: HttpConf, deps: EngineRouteDeps) {
    this.#conf = conf;
    this.#deps = deps;
    this.#listens = listenPorts(conf);
    this.#fieldNamesSet = this.#listens.map(({ servers }) =>
      servers.some((s) => s.conf.fieldNames !== undefined)
    );
    this.#logScopes = this.#listens.map(({ defaultServer }) => ({
      location: defaultServer.conf,
      serverName: defaultServer.serverName,
    }));
    const body = deps.body;
    this.#buffering = body?.proxyRequestBuffering
      ? {
        bufferSize: body.clientBodyBufferSize,
        timeoutMs: body.clientBodyTimeoutMs,
        temp: new TempFiles(body.clientBodyTempPath),
        deadlines: this.#bodyDeadlines,
      }
      : undefined;
    this.#registry = new UpstreamRegistry(conf.upstreams, {
      ...(deps.onConnect ? { onConnect: deps.onConnect } : {}),
      ...(deps.transport ? { transport: deps.transport } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
    this.#static = (req, content, request) =>
      this.#serveStatic(req, content, request);
    this.#flowDeps.caseless = conf.caseless;
    this.#mayGzip = conf.servers.some((server) =>
      anyLocation(server, (l) => l.gzip.enabled)
    );
    this.#mayLimitConn = conf.servers.some((server) =>
      anyLocation(server, (l) => l.limitConn !== null)
    );
    this.#fastcgiContext = conf.fastcgiUpstreams === undefined ? null : {
      registry: fastcgiRegistry(conf.fastcgiUpstreams, {
        ...(deps.onConnect ? { onConnect: deps.onConnect } : {}),
        ...(deps.now ? { now: deps.now } : {}),
      }),
      stats: deps.stats,
      ...(deps.stopping ? { stopping: deps.stopping } : {}),
    };
    this.#maySsi = conf.servers.some((server) =>
      anyLocation(server, (l) => l.ssi !== undefined)
    );
    this.#proxyContext = {
      registry: this.#registry,
      stats: deps.stats,
      caseless: conf.caseless,
      ...(deps.stopping ? { stopping: deps.stopping } : {}),
    };
    this.#gate = new AccessGate(new PasswordChecker(), deps.logger);
  }

  /** The upstream groups, for shutdown and the status page. */
  get groups(): UpstreamGroup[] {
    return [...this.#registry.groups];
  }

  /**
   * Where a request's error lines go before its server is chosen: the
   * default server of its socket (ngx_http_create_request).
   *
   * @param index The socket's index in `listenPorts`.
   * @returns The default server's level and name, made once.
   */
  logScope(index: number): LogScope {
    return this.#logScopes[index] ?? this.#logScopes[0]!;
  }

  /**
   * Which request fields are kept by their names: the
   * `underscores_in_headers` and `ignore_invalid_headers` of the server the
   * request's name chooses. nginx reads them for each field line from the
   * server current when the line is read: the socket's default server's
   * until the request line's or the Host field's name chooses another
   * (ngx_http_process_request_headers). `Deno.serve` does not keep the
   * fields' order; clients send Host first, so every field is read with
   * the chosen server's.
   *
   * @param index The socket's index in `listenPorts`.
   * @param host The request's name (`Host`, or the request line's), `null`
   * when none.
   * @returns The settings; `undefined` at nginx's defaults.
   */
  fieldNames(index: number, host: string | null): FieldNames | undefined {
    // A name search only where a server of the socket sets them.
    if (!(this.#fieldNamesSet[index] ?? this.#fieldNamesSet[0]!)) {
      return undefined;
    }
    return this.#namedServer(index, host).conf.fieldNames;
  }

  /**
   * The server a request's name chooses for the lines about its fields: an
   * invalid name chooses none (ngx_http_validate_host refuses it before
   * the server changes), so the default server's.
   */
  #namedServer(index: number, host: string | null): ServerConf {
    const listen = this.#listens[index] ?? this.#listens[0]!;
    return host !== null && isValidHost(host)
      ? findServer(listen, hostName(host)).server
      : listen.defaultServer;
  }

  /**
   * Where lines about the request's fields go (a field nginx drops by its
   * name): the server its name chooses, current when nginx reads the
   * fields after Host (ngx_http_process_request_headers).
   *
   * @param index The socket's index in `listenPorts`.
   * @param host The request's name, `null` when none.
   * @returns That server's level and name.
   */
  hostScope(index: number, host: string | null): LogScope {
    return this.#scopeOf(index, this.#namedServer(index, host));
  }

  #scopeOf(index: number, server: ServerConf): LogScope {
    const listen = this.#listens[index] ?? this.#listens[0]!;
    return server === listen.defaultServer
      ? this.logScope(index)
      : { location: server.conf, serverName: server.serverName };
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
  ): void {
    const { socket, stage } = where;
    const listen = this.#listens[socket.index] ?? this.#listens[0]!;
    const server = stage === "head"
      ? findServer(listen, hostName(request.host)).server
      : listen.defaultServer;
    request.at = this.#scopeOf(socket.index, server);
    if (!this.#deps.logger.accessEnabled) return;
    request.accessLogs = server.conf.accessLogs;
    // Only a format beyond `combined`'s, or an `if=`, reads them.
    if (!this.#deps.logger.accessNeedsFields) return;
    request.vars = refusedVars(req, request, {
      listen,
      server,
      port: socket.port,
      // An invalid Host is never the request's (ngx_http_validate_host
      // refuses it before headers_in.server is set): `$host` is the
      // server's name then.
      host: request.host !== null && isValidHost(request.host)
        ? hostName(request.host)
        : "",
      stage,
    });
  }

  /** Closes every upstream connection. */
  close(): void {
    this.#registry.close();
    this.#fastcgiContext?.registry.close();
    this.#bodyDeadlines.stop();
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
    const listen = this.#listens[socket.index] ?? this.#listens[0]!;
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
    const flow = new RouteFlow(vars, request, req, socket.port);
    flow.oneWrite = listen.ssl && !request.served2;
    // Read before anything waits: `Deno.serve` settles the promise only if
    // it was asked for before the exchange ended (a client gone mid-request
    // would otherwise leave a count that is never given back).
    const completed = this.#mayLimitConn ? request.completed : undefined;
    const answered = serveRequest(req, server, flow, this.#flowDeps);
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
      const release = flow.access?.release ?? null;
      if (release !== null) {
        // ngx_http_limit_conn_cleanup: the count goes when the request ends.
        const end = tunnelClosed(answer) ?? completed;
        if (end === undefined) release();
        else end.then(release, release);
      }
      // nginx's SSI filter, then gzip, under the location that answered.
      let response = answer;
      if (conf?.ssi !== undefined) {
        // The page's and its includes' variables are one (r->main's).
        const budget = { made: 0, store: new SsiStore() };
        response = ssiFilter(answer, {
          conf: conf.ssi,
          vars,
          head: req.method === "HEAD",
          log: ssiLog(request, answer),
          include: this.#includer(flow, server, budget, 1),
          logged: loggedUpstream,
          store: budget.store,
        });
      }
      if (!conf?.gzip.enabled) return response;
      // nginx's gzip filter, under the location that answered.
      return gzipFilter(response, {
        conf,
        request: vars,
        head: req.method === "HEAD",
        flush: conf.proxyPass !== null && !conf.proxyBuffering,
      });
    }, (error) => {
      flow.access?.release?.();
      throw error;
    });
  }

  /**
   * SSI's `include` for the answer of a request (or of an include): a
   * subrequest through the engine (`serveSubrequest`) for the main
   * request's server, its answer through the SSI filter of the location
   * that answered it; nested at most `MAX_INCLUDE_DEPTH` deep (nginx's
   * `subrequests cycle` line past it), `MAX_INCLUDES` in all.
   */
  #includer(
    parent: RouteFlow,
    server: ServerConf,
    budget: IncludeBudget,
    depth: number,
  ): (
    uri: string,
    args: string,
    signal: AbortSignal,
  ) => Promise<Response> | string {
    return (uri, args, signal) => {
      if (depth > MAX_INCLUDE_DEPTH) {
        return `subrequests cycle while processing "${uri}"`;
      }
      if (budget.made >= MAX_INCLUDES) {
        return `more than ${MAX_INCLUDES} SSI includes in one request: "${uri}"`;
      }
      budget.made++;
      const vars: RequestVars = {
        ...parent.vars,
        method: "GET",
        uri,
        args,
        argsSet: undefined,
        captures: [],
        named: {},
        mapValues: undefined,
        log: undefined,
      };
      // The phases start again from the server's level.
      delete vars.location;
      const sub = new Subrequest(parent.request, uri, args);
      sub.vars = vars;
      const url = new URL("http://localhost/");
      url.pathname = uri;
      url.search = args;
      // The client's leaving (the page's body cancelled) ends the
      // subrequest too: its upstream is closed, as nginx's finalized
      // request closes its subrequests'.
      const req = new Request(url, { headers: parent.req.headers, signal });
      const flow = new RouteFlow(vars, sub, req, parent.port);
      return Promise.resolve(
        serveSubrequest(req, server, flow, this.#flowDeps),
      ).then((response) => {
        const conf = flow.answered;
        if (conf?.ssi === undefined) return response;
        return ssiFilter(response, {
          conf: conf.ssi,
          vars,
          head: false,
          log: ssiLog(sub, response),
          include: this.#includer(flow, server, budget, depth + 1),
          logged: loggedUpstream,
          store: budget.store,
        });
      });
    };
  }

  /**
   * The content handlers, made once: each request's own part comes with
   * its flow (closures per request were garbage per request).
   */
  readonly #flowDeps: FlowDeps = {
    handlers: {
      static: (r, content, f) =>
        tooBig(content.conf, (f as RouteFlow).request) ??
          this.#static(r, content, f),
      proxy: (r, content, f) => {
        const { request, req } = f as RouteFlow;
        const refused = tooBig(content.conf, request);
        if (refused !== null) return Promise.resolve(refused);
        if (request.bodyInGet) {
          request.log({
            level: "info",
            message: `client sent body in ${r.method} request`,
            action: READING_HEADERS,
          });
          return Promise.resolve(errorResponse(400, {
            head: r.method === "HEAD",
            headers: { connection: "close" },
          }));
        }
        // Forwarding reads the body, and Deno.serve answers the client's
        // `Expect: 100-continue` on the first read of a non-empty body.
        // (The client's request: an error page's copy is not what was read.)
        request.continued = expectsContinue(req, request.contentLength);
        return this.#proxy(r, content, f, request);
      },
      stubStatus: (r) =>
        stubStatusResponse(
          r,
          this.#deps.stats,
          this.#deps.connections?.() ?? 0,
        ),
    },
    io: this.#io,
    caseless: false,
    access: (conf, f) => {
      const flow = f as RouteFlow;
      return this.#gate.run(conf, {
        vars: flow.vars,
        authorization: flow.req.headers.get("authorization"),
        signal: flow.req.signal,
        log: flow.log,
        // Made when a location has access phases: most requests need none.
        state: flow.access ??= {
          limitReqDone: false,
          limitConnDone: false,
          release: null,
        },
      });
    },
  };

  /** A file, synchronously unless a folder must settle or the default page is read. */
  #serveStatic(
    req: Request,
    content: Extract<Content, { kind: "static" }>,
    request: FlowRequest,
  ): Response | Promise<Response> {
    const { vars } = request;
    const options: ServeFileOptions = {
      path: content.path,
      root: content.root,
      conf: content.conf,
      uri: vars.uri,
      vars,
      gzipVary: content.conf.gzipVary,
      cache: this.cache,
      now: (request as RouteFlow).request.now ?? Date.now(),
      // Read in the handler's walk of the client's fields (an error page's
      // copy of the request has its own).
      asked: req === (request as RouteFlow).req
        ? (request as RouteFlow).request.fields
        : null,
    };
    if (request.errStatus !== undefined) options.errStatus = request.errStatus;
    if ((request as RouteFlow).request instanceof Subrequest) {
      options.subrequest = true;
    }
    // The gzip filter makes a response of its own from the file's answer.
    if ((request as RouteFlow).oneWrite && !content.conf.gzip.enabled) {
      options.oneWrite = true;
    }
    const result = serveFile(req, options);
    if (result.retryInMs !== undefined) {
      return this.#settled(req, { content, request, options, result });
    }
    return this.#staticAnswer(req, content, request, result);
  }

  /**
   * A folder on the path changed a moment ago: containment waits for it
   * to settle (static/settled_proof.ts), a bounded while, else the 404.
   */
  async #settled(
    req: Request,
    { content, request, options, result }: {
      content: Extract<Content, { kind: "static" }>;
      request: FlowRequest;
      options: ServeFileOptions;
      result: StaticResult;
    },
  ): Promise<Response> {
    for (let waited = 0; result.retryInMs !== undefined;) {
      if (waited >= MAX_SETTLE_WAIT_MS) break;
      const ms = result.retryInMs;
      await result.response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, ms));
      waited += ms;
      // Later than the request's arrival: the clock of the new attempt,
      // so the `stat` it shares is no older than itself.
      options.now = Date.now();
      result = serveFile(req, options);
    }
    return await this.#staticAnswer(req, content, request, result);
  }

  /** The file's answer, its line written; the default page while no app is installed. */
  #staticAnswer(
    req: Request,
    content: Extract<Content, { kind: "static" }>,
    request: FlowRequest,
    result: StaticResult,
  ): Response | Promise<Response> {
    const { vars } = request;
    if (
      result.response.status === 404 && content.conf.defaultPage &&
      this.#deps.defaultPage !== undefined && fileKind(content.root) !== "dir"
    ) {
      // While no client app is installed (station_default_page): its page
      // at `/`, and the rest a 404 without a line for each missing file.
      if (isIndexTarget(vars.requestUri)) {
        const page = this.#deps.defaultPage;
        const cancelled = result.response.body?.cancel();
        return (cancelled ?? Promise.resolve()).then(() =>
          page(req, vars.remoteAddr)
        );
      }
      return result.response;
    }
    if (result.failure) {
      request.log({
        level: result.failure.level,
        message: result.failure.message,
        ...(result.failure.osError ? { osError: result.failure.osError } : {}),
      });
    }
    return result.response;
  }

  /**
   * A proxied location (`proxy/location_proxy.ts`). The URI's state is read
   * back as nginx keeps it: changed by a rewrite or an internal redirect
   * (`$uri` or `$args` differ from the client's), and `rewrite … break` in
   * the final location (the phases' `rewritten`). Not async: without a
   * filter to run, the proxy's promise is handed back (an async layer and
   * its promises fewer per request).
   */
  #proxy(
    req: Request,
    content: Parameters<ContentHandlers["proxy"]>[1],
    flow: FlowRequest,
    request: EngineRequest,
  ): Promise<Response> {
    const { vars } = flow;
    // A subrequest (SSI's include) sends its own URI, never the client's.
    const changed = content.rewritten || vars.uri !== request.uri ||
      vars.args !== request.args || request instanceof Subrequest;
    const location: LocationRequest = {
      conf: content.conf,
      vars,
      rewritten: changed,
      internal: changed,
      breakInLocation: content.rewritten,
      log: flow.log,
      contentLength: request.contentLength,
      // The walk was of the client's request, not an error page's copy.
      clientFields: req === (flow as RouteFlow).req
        ? request.clientFields ?? null
        : null,
      tries: request.tries,
      buffering: this.#buffering,
      // Read when a rewritten Location needs it, not made per request.
      originOf: flow,
    };
    const proxied = content.conf.fastcgi === undefined
      ? proxyLocation(req, location, this.#proxyContext)
      : fastcgiLocation(req, location, this.#fastcgiContext!);
    // nginx's charset and headers filters run on proxied answers too (CORS
    // headers in an /api/ location are the common case); the upstream's own
    // Content-Type passes as it is unless it has no charset.
    const { conf } = content;
    if (conf.charset === null && !hasHeadersFilter(conf)) return proxied;
    return proxied.then((response) => {
      if (conf.charset !== null) withCharset(response, conf);
      if (hasHeadersFilter(conf)) {
        filterHeaders(response.headers, {
          status: filterStatus(response, flow),
          conf,
          vars,
        });
      }
      return response;
    });
  }
}

/** A request's part in the flow, with what the handler read of it. */
class RouteFlow implements FlowRequest {
  /** The request's variables. */
  readonly vars: RequestVars;
  /** What the handler read of the request. */
  readonly request: EngineRequest;
  /** The request itself, for the access phase's fields and signal. */
  readonly req: Request;
  /** The limits' state once a location with access phases is reached. */
  access: AccessState | null = null;
  /** Set by the flow: the location that answered. */
  answered?: LocationConf;
  /** Set by the flow while an `error_page` is answered. */
  errStatus?: number;
  /**
   * A TLS connection over HTTP/1.x: a file's answer asks to be written in
   * one piece in the fields it is made from (`response/tls_one_write.ts`).
   */
  oneWrite = false;
  /** The port the request came in on, for the origin. */
  readonly port: number;
  #origin: string | null = null;

  constructor(
    vars: RequestVars,
    request: EngineRequest,
    req: Request,
    port: number,
  ) {
    this.vars = vars;
    this.request = request;
    this.req = req;
    this.port = port;
  }

  /** The request's error-line writer. */
  get log(): (event: RequestEvent) => void {
    return this.request.log;
  }

  /** Made when a redirect or the proxy names it: most answers need none. */
  get origin(): string {
    return this.#origin ??= publicOrigin(
      this.request.host,
      this.port,
      this.vars.scheme,
    );
  }
}

/**
 * nginx checks client_max_body_size once the location is found, for every
 * location, before reading the body (no 100 Continue is sent).
 */
function tooBig(conf: LocationConf, request: EngineRequest): Response | null {
  const max = conf.clientMaxBodySize;
  const length = request.contentLength;
  if (max === 0 || length === null || length <= max) return null;
  // The body is left unread: Deno.serve adds `Connection: close` itself
  // and closes once it has discarded it.
  request.log({
    level: "error",
    message:
      `client intended to send too large body: ${request.lengthDigits} bytes`,
  });
  return errorResponse(413);
}

/** Whether any level of a server (its own, a location, a named one) passes a test. */
function anyLocation(
  server: ServerConf,
  test: (conf: LocationConf) => boolean,
): boolean {
  const visit = (conf: LocationConf): boolean =>
    test(conf) || [
      ...conf.locations.exact.values(),
      ...conf.locations.prefixes,
      ...conf.locations.regexes,
      ...ifLevels(conf),
    ].some(visit);
  return visit(server.conf) || [...server.named.values()].some(visit);
}

/** The levels of a location's `if` blocks. */
function ifLevels(conf: LocationConf): LocationConf[] {
  return (conf.rewrite?.ops ?? []).flatMap((op) =>
    op.op === "if" ? [op.location] : []
  );
}

/**
 * The SSI filter's error lines: as nginx's while it sends a file, or with
 * the `upstream:` field while it relays an answer.
 */
function ssiLog(
  request: EngineRequest,
  response: Response,
): (message: string) => void {
  const upstream = relayedUpstream(response);
  return (message) =>
    request.log(
      upstream === undefined
        ? { level: "error", message, action: "sending response to client" }
        : { level: "error", message, action: "sending to client", upstream },
    );
}

/** A relayed body's failure, logged by the upstream client as it failed. */
function loggedUpstream(error: unknown): boolean {
  return error instanceof UpstreamError;
}

/** What a path is, without following a failure into an exception. */
function fileKind(path: string): "file" | "dir" | null {
  try {
    return kindOf(Deno.statSync(path));
  } catch {
    return null;
  }
}

/** What a `stat` says a path is (`null`: nothing, or neither kind). */
function kindOf(info: Deno.FileInfo | null): "file" | "dir" | null {
  if (info === null) return null;
  return info.isFile ? "file" : info.isDirectory ? "dir" : null;
}

/**
 * The servers of each listening port, in the order first seen: the sockets
 * of one port are bound together (both loopbacks of `localhost`), so
 * servers that share a port share a name search even when their addresses
 * differ (a named difference from nginx).
 *
 * @param conf The configuration.
 * @returns One group per port; the first is the first server's.
 */
export function listenPorts(conf: HttpConf): ListenGroup[] {
  return groupByListen(conf.servers, "port");
}

/** `/` or `/index.html` as requested (an app route rewritten to it is not). */
function isIndexTarget(target: string): boolean {
  const path = target.split("?")[0];
  return path === "/" || path === "/index.html";
}
