/**
 * The request handler: what nginx refuses before it reads a configuration
 * (the request line and head), then the configuration engine
 * (`request/`: server → location → static | proxy | return), then
 * the access line. The configuration is a station's nginx.conf, or the
 * built-in one the flags and config file write (`nginx_conf/built_in.ts`).
 * It never throws to `Deno.serve`: an unexpected exception becomes a 500 and
 * an `[alert]` line.
 *
 * @module
 */

import type { ConnectionCounter } from "./log/mod.ts";
import type { GatewayConfig } from "./config/mod.ts";
import { type RequestEvent, tunnelClosed } from "./proxy/mod.ts";
import {
  errorResponse,
  isBuiltInError,
  isUnanswered,
  markUnread,
  writeInOnePiece,
} from "./response/mod.ts";
import { isLevelEnabled, type Logger } from "./log/mod.ts";
import {
  absoluteAuthority,
  type CheckEvent,
  checkRequestHead,
  checkRequestLine,
  decodeTarget,
  type LineVerdict,
  looksLikeHttp2,
  originTarget,
  readFields,
  READING_REQUEST_LINE,
  type RejectStatus,
  requestLine,
  requestTarget,
  spokeHttp1,
  urlAuthority,
  urlHost,
} from "./routing/mod.ts";
import { GatewayStats, isLoopback, statusDocument } from "./status.ts";
import type { TransportFactory } from "./upstream/mod.ts";
import type { ServerConf } from "./engine/mod.ts";
import { DefaultPageRoute } from "./default_page_route.ts";
import {
  EngineRoute,
  type InFlightRegistry,
  PendingAccessLine,
} from "./request/mod.ts";
import { ErrorLines, RequestContext } from "./request_context.ts";
import {
  ClosingConnections,
  connectionKey,
  cutAfter,
  cutConnection,
  endsConnection,
  sayClose,
} from "./closing_connections.ts";
import { type BuiltInSettings, compileBuiltIn } from "./nginx_conf/mod.ts";

/**
 * A `Deno.serve` handler: an answer made without a wait (a file, a
 * refusal) is handed back as it is, the others as a promise.
 */
export type GatewayHandler =
  & ((
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    socket?: ListenSocket,
  ) => Response | Promise<Response>)
  & {
    /** Closes every upstream connection (at shutdown). */
    close(): void;
  };

/** Which of the configuration's ports a request came in on. */
export interface ListenSocket {
  /** The index in `listenPorts` (0: the first server's). */
  index: number;
  /** The port bound. */
  port: number;
  /** The socket speaks TLS (`listen … ssl`). */
  tls?: boolean;
}

/**
 * The settings the handler reads, under {@linkcode GatewayConfig}'s names:
 * a compiled nginx.conf (`engine`), or the settings the built-in
 * configuration is written from.
 */
export type HandlerSettings =
  & BuiltInSettings
  & Pick<
    GatewayConfig,
    | "errorLogLevel"
    | "engine"
    | "largeClientHeaderBuffers"
    | "clientBodyTimeoutMs"
    | "clientBodyBufferSize"
    | "clientBodyTempPath"
    | "proxyRequestBuffering"
  >;

/** What the handler knows only once the gateway runs: no settings. */
export interface GatewayRuntime {
  /** The port bound, for absolute redirects (nginx uses the listen socket's port). */
  port: number;
  /** The gateway's version, for the default page and the status endpoint. */
  version: string;
  /** The log files' paths, for the default page; none shown when absent. */
  logFiles?: { error: string; access: string | null };
  /**
   * Match locations without regard to case, as nginx for Windows.
   * @default {Deno.build.os === "windows"}
   */
  caseless?: boolean;
}

/** The handler's collaborators. */
export interface GatewayDeps {
  /** Where lines go. */
  logger: Logger;
  /** nginx's `*N` numbers. */
  counter: ConnectionCounter;
  /** Makes each upstream server's transport (in-process tests). */
  transport?: TransportFactory;
  /** Called for every new upstream connection. */
  onConnect?: () => void;
  /** The upstream groups' clock in milliseconds (tests). */
  now?: () => number;
  /** Counters for the status endpoint. */
  stats?: GatewayStats;
  /** Requests whose access line is pending, for shutdown to give up on. */
  inFlight?: InFlightRegistry;
  /** Connections told `close` (tests give a small one). */
  closing?: ClosingConnections;
}

const CLOSE = { connection: "close" };

/** What the end of a request's handling needs besides its answer. */
interface Handled {
  req: Request;
  info: Deno.ServeHandlerInfo<Deno.NetAddr>;
  socket: ListenSocket | undefined;
  ctx: RequestContext;
  accessLine: PendingAccessLine | null;
  /** `info.completed`, asked for before anything waited; with an access line only. */
  completed: Promise<void> | null;
}
const LINE_OK: LineVerdict = { kind: "ok" };
/**
 * The `unexpected error` line for an exception the handler caught: the
 * stack on one line, as every error-log line is.
 */
function unexpectedError(error: unknown): RequestEvent {
  return {
    level: "alert",
    message: `unexpected error: ${
      error instanceof Error ? error.stack ?? error.message : error
    }`.replaceAll("\n", " "),
  };
}

const INVALID_REQUEST_LINE: CheckEvent = {
  level: "info",
  message: "client sent invalid request",
  action: READING_REQUEST_LINE,
};

/**
 * Creates the gateway's request handler.
 *
 * @param config The gateway's settings.
 * @param runtime The bound port, the version and the log paths.
 * @param deps Logger, connection counter and upstream group.
 * @returns The handler for `Deno.serve`.
 */
export function createGatewayHandler(
  config: HandlerSettings,
  runtime: GatewayRuntime,
  deps: GatewayDeps,
): GatewayHandler {
  const { logger } = deps;
  const stats = deps.stats ?? new GatewayStats();
  const caseless = runtime.caseless ?? Deno.build.os === "windows";
  const conf = config.engine ?? compileBuiltIn(config, { caseless });
  // nginx's lines for `_` in field names are `info`: looked for only when
  // some error log takes that level.
  const notes = isLevelEnabled("info", conf.errorLogFloor);
  let defaultPage: DefaultPageRoute | null = null;
  const engine = new EngineRoute(conf, {
    port: runtime.port,
    stats,
    connections: () => deps.counter.clients,
    logger,
    ...(deps.onConnect ? { onConnect: deps.onConnect } : {}),
    ...(deps.transport ? { transport: deps.transport } : {}),
    ...(deps.now ? { now: deps.now } : {}),
    defaultPage: (req, client) => defaultPage!.defaultPage(req, client),
    body: config,
    stopping: () => deps.inFlight?.stopping === true,
  });
  defaultPage = new DefaultPageRoute(config, {
    version: runtime.version,
    port: runtime.port,
    ...(runtime.logFiles ? { logFiles: runtime.logFiles } : {}),
    ...(engine.groups[0] ? { group: engine.groups[0] } : {}),
    logger,
  });
  const statusPath = conf.statusPath ?? config.statusPath;
  const closing = deps.closing ?? new ClosingConnections();

  const handler = (
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    socket?: ListenSocket,
  ): Response | Promise<Response> => {
    if (closing.size > 0) {
      // Behind a response that said `close`: nginx never reads this
      // request, so it is neither served nor logged, and the connection
      // ends (closing_connections.ts).
      const key = connectionKey(
        info.remoteAddr,
        socket?.port ?? runtime.port,
      );
      if (closing.has(key)) {
        const head = req.method === "HEAD";
        if (!head) closing.forget(key);
        return cutConnection(head);
      }
    }
    const ctx = describe(req, info, socket);
    // Opened before the request is handled: shutdown may give up on it.
    const accessLine = logger.accessEnabled
      ? new PendingAccessLine(req, logger, ctx, deps.inFlight)
      : null;
    // Asked for now, before anything waits: `Deno.serve` settles it only if
    // it was asked for before the exchange ended, and the line is written
    // when it settles (a client gone mid-request too).
    const completed = accessLine === null ? null : info.completed;
    if (accessLine !== null) ctx.tries = accessLine.upstream;

    stats.requests++;
    stats.inFlight++;
    const handled: Handled = { req, info, socket, ctx, accessLine, completed };
    let answer: Response | Promise<Response>;
    try {
      answer = handle(req, ctx, socket);
    } catch (error) {
      ctx.log(unexpectedError(error));
      answer = errorResponse(500);
    }
    // The request's clock served what ran without a wait; what runs
    // after one reads the clock itself.
    ctx.now = undefined;
    // An answer made without a wait is finished now: an `await` of it
    // cost an async function's suspension and a turn of the microtask
    // queue per request (2-7 % of a 2 KB page over TLS, A/B).
    return answer instanceof Response
      ? finish(handled, answer)
      : finishLater(handled, answer);
  };
  return Object.assign(handler, { close: () => engine.close() });

  /** The answer of a request that waited, or the 500 of a defect. */
  async function finishLater(
    handled: Handled,
    answer: Promise<Response>,
  ): Promise<Response> {
    let response: Response;
    try {
      response = await answer;
    } catch (error) {
      handled.ctx.log(unexpectedError(error));
      response = errorResponse(500);
    }
    return finish(handled, response);
  }

  /**
   * The end of every request's handling: the connection a `close` answer
   * ends, the framing over TLS, the counters and the access line.
   */
  function finish(
    handled: Handled,
    answer: Response,
  ): Response | Promise<Response> {
    const { req, info, socket, ctx, accessLine, completed } = handled;
    let response = answer;
    if (ctx.continued) accessLine?.continued();
    if (!ctx.fieldsRead) accessLine?.fieldsUnread();
    // Only the gateway's own answers end the connection: its refusals that
    // say `close`, and its own pages for the statuses after which nginx
    // drops keep-alive (an upstream's Connection field is hop-by-hop and
    // never passed on; an upstream's own 500 keeps the connection).
    // An error_page that answered such a status ends it too (the flow
    // says so: the page's own status may be a 200).
    const paged = ctx.closing && !ctx.served2;
    if (
      paged || response.status >= 400 && endsConnection(response, ctx.served2)
    ) {
      if (!ctx.served2 && (paged || isBuiltInError(response))) {
        sayClose(req, response);
      }
      const key = connectionKey(
        info.remoteAddr,
        socket?.port ?? runtime.port,
      );
      const cuttable = response.body !== null;
      if (isUnanswered(response)) {
        // nginx closes without a byte (`return 444` …). Deno.serve writes
        // a head whatever the handler does: a body that fails at once ends
        // the connection right behind it, before any byte of a body. A
        // HEAD's body is never read: its connection is remembered instead.
        if (req.method === "HEAD") closing.mark(key, true);
        else response = markUnread(cutConnection(false, response.status));
      } else if (ctx.served2 && cuttable) {
        // Over TLS a request without Host may be HTTP/2 or HTTP/1.x (see
        // describe()): remembering its connection would cut the HTTP/2
        // streams that follow, so the answer itself is cut, which ends an
        // HTTP/1.x connection and an HTTP/2 stream alone.
        response = cutAfter(response);
      } else if (!closing.mark(key, !cuttable)) response = cutAfter(response);
    }

    // Deno leaves Nagle's algorithm on for TLS connections: a head sent
    // alone would hold the body until the client's delayed acknowledgement.
    if (socket?.tls === true && !ctx.served2) {
      writeInOnePiece(req.method, response);
    }

    stats.inFlight--;
    stats.answered(response.status);
    // The rest serves only the access log: with it off, nothing to compute,
    // and bodies keep Deno.serve's native path (no counting wrap).
    if (accessLine === null) return response;
    if (ctx.accessLogs !== null) {
      if (ctx.accessLogs.length === 0) {
        accessLine.cancel();
        return response;
      }
      accessLine.writeTo(ctx.accessLogs);
    }
    return accessLine.settle(
      req,
      response,
      // Read above whenever there is an access line.
      completed!,
      tunnelClosed(response),
    );
  }

  /** What the handler's steps need to know of a request, read once. */
  function describe(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    socket: ListenSocket | undefined,
  ): RequestContext {
    // Read once: each read of `info.remoteAddr` is a call into Deno and a
    // new object.
    const peer = info.remoteAddr;
    const client = peer.hostname;
    // The request's clock, read once for every use: the connection's
    // last request, the shared `stat` of a file, `expires`.
    const now = Date.now();
    const connection = deps.counter.forPeer(client, peer.port, now);
    // One walk over the fields picks those read here and by the checks.
    const fields = readFields(req.headers);
    let host = fields.host;
    const referrer = fields.referrer;
    const scheme = socket?.tls === true ? "https" : "http";
    // Deno.serve offers HTTP/2 by ALPN on every TLS socket: such a request
    // is served, its `:authority` (in the URL) being its Host, as nginx's.
    // Its URL can equal the fallback of a request without Host, so over
    // TLS a request without Host counts as HTTP/2 (an HTTP/1.x one
    // without Host, which nginx refuses or logs as HTTP/1.0, is served)
    // unless a field HTTP/2 cannot carry shows it is HTTP/1.x.
    const http1 = scheme === "https" && host === null &&
      spokeHttp1(req.headers);
    const served2 = scheme === "https" && host === null && !http1;
    let http2 = served2 ||
      (!http1 && looksLikeHttp2(req.url, host, socket?.port ?? runtime.port));
    if (served2) host = urlAuthority(req.url);
    const shown = urlHost(host);
    // The common URL, scheme and Host and target, is read in one pass.
    const origin = host !== null && shown === host
      ? originTarget(req.url, host, scheme)
      : null;
    const target = origin ?? requestTarget(req.url, shown);
    // Read once: the line and the engine's authority both need it.
    const authority = origin !== null
      ? null
      : absoluteAuthority(req.url, host, target, scheme);
    const sent = requestLine(req, { host, target, http2, scheme, authority });
    if (served2) http2 = false;
    const line = http2 ? LINE_OK : checkRequestLine(
      req.method,
      sent,
      config.largeClientHeaderBuffers,
      authority === null ? null : { url: req.url, authority },
    );
    // A 414 is logged with what nginx held of the line.
    const request = line.kind === "reject" ? line.request : sent;
    const lines = new ErrorLines(logger, {
      connection,
      client,
      at: engine.logScope(socket?.index ?? 0),
      errorLogs: conf.errorLogs,
      request,
      host,
      referrer,
    });
    const ctx = new RequestContext({
      req,
      info,
      now,
      fields,
      authority,
      client,
      clientPort: peer.port,
      host,
      referrer,
      target,
      http2,
      served2,
      request,
      line,
    }, lines);
    ctx.connectionRequests = deps.counter.lastRequests;
    return ctx;
  }

  /**
   * A request refused before routing: the engine decides the logs it goes
   * to; refused at its request line, nginx had read none of its fields.
   */
  function refuse(
    req: Request,
    ctx: RequestContext,
    where: Parameters<EngineRoute["refused"]>[2],
  ): ServerConf {
    const server = engine.refused(req, ctx, where);
    if (where.stage === "line" || where.stage === "target") {
      ctx.fieldsRead = false;
    }
    return server;
  }

  // Not async: the engine's promise is handed back, so a request costs one
  // async layer fewer; a throw here still reaches the handler's catch
  // through its await.
  function handle(
    req: Request,
    ctx: RequestContext,
    socket: ListenSocket | undefined,
  ): Response | Promise<Response> {
    const { target, hostField: host, client, http2 } = ctx;
    const at = socket ?? { index: 0, port: runtime.port };
    if (http2 || req.method === "CONNECT") {
      // nginx without `http2` on the listen reads the HTTP/2 preface as a
      // request line and refuses it; Deno.serve has already spoken HTTP/2,
      // so each stream is refused (Connection is not an HTTP/2 field).
      // nginx 1.22 reads a CONNECT line as invalid too.
      refuse(req, ctx, { socket: at, stage: "line" });
      ctx.logRequestLine(INVALID_REQUEST_LINE);
      return http2
        ? errorResponse(400, { head: req.method === "HEAD" })
        : badRequest(req);
    }
    if (ctx.line.kind === "reject") {
      refuse(req, ctx, { socket: at, stage: "line" });
      ctx.logRequestLine(ctx.line.event);
      return badRequest(req, ctx.line.status);
    }
    const decoded = decodeTarget(target);
    if (decoded.kind === "invalid") {
      // `..` above the root, `%00`, a bad escape: nginx's request-line error.
      const where = { socket: at, stage: "target" as const };
      const server = refuse(req, ctx, where);
      ctx.logRequestLine(INVALID_REQUEST_LINE);
      return engine.answerRefusal(
        req,
        ctx,
        { ...where, server },
        badRequest(req),
      );
    }
    const fieldNames = engine.fieldNames(at.index, ctx.authority ?? host);
    const verdict = checkRequestHead(req, host, {
      notes,
      limits: config.largeClientHeaderBuffers,
      line: ctx.request,
      fieldNames,
      read: ctx.fields,
    });
    if (verdict.notes.length > 0) {
      // Written with the server current when nginx read those fields.
      ctx.at = engine.hostScope(at.index, ctx.authority ?? host);
      for (let i = 0; i < verdict.notes.length; i++) ctx.log(verdict.notes[i]!);
    }
    if (verdict.kind === "reject") {
      ctx.host = ctx.authority ?? host;
      ctx.uri = decoded.uri;
      ctx.args = decoded.args;
      const where = {
        socket: at,
        stage: verdict.wholeHead ? "head" as const : "field" as const,
      };
      const server = refuse(req, ctx, where);
      // The access line reads the fields the checks kept, whichever server
      // it is written for.
      if (ctx.vars !== null) ctx.vars.fieldNames = fieldNames;
      ctx.log(verdict.event);
      return engine.answerRefusal(
        req,
        ctx,
        { ...where, server },
        badRequest(req, verdict.status),
      );
    }
    if (
      statusPath !== null && isLoopback(client) && decoded.uri === statusPath
    ) {
      return Response.json(
        statusDocument({
          version: runtime.version,
          stats,
          ...(engine.groups[0] ? { group: engine.groups[0] } : {}),
          connections: deps.counter.size,
          staticCacheBytes: engine.cache.totalBytes,
          memory: Deno.memoryUsage(),
        }),
        { headers: { "cache-control": "no-store" } },
      );
    }
    const length = verdict.contentLength;
    ctx.host = ctx.authority ?? host;
    ctx.uri = decoded.uri;
    ctx.args = decoded.args;
    ctx.declareLength(length);
    ctx.clientFields = verdict.fields;
    return engine.serve(req, ctx, at);
  }
}

/**
 * nginx answers 400 and closes the connection on every request it cannot
 * read (ngx_http_special_response_handler drops keepalive); `finish()`
 * leaves the field out where `Deno.serve` writes its own.
 */
function badRequest(req: Request, status: RejectStatus = 400): Response {
  return errorResponse(status, {
    head: req.method === "HEAD",
    headers: CLOSE,
  });
}
