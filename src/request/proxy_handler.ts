/**
 * The proxy content handler of the request path: a location that forwards
 * (`proxy_pass`, or `fastcgi_pass`) gets the request's URI state, body and
 * walked fields handed to `proxy/location_proxy.ts` (or `fastcgi/`), and
 * its answer through nginx's charset and headers filters. It owns what
 * forwarding keeps for the gateway's life: the upstream groups, the body
 * buffering and its deadlines, made once and closed at shutdown.
 *
 * @module
 */

import type { Content, HttpConf } from "../engine/mod.ts";
import {
  BodyDeadlines,
  type BodyTimeout,
  type LocationProxyContext,
  type LocationRequest,
  proxyLocation,
  type RequestBuffering,
  TempFiles,
  UpstreamRegistry,
} from "../proxy/mod.ts";
import {
  type FastcgiContext,
  fastcgiLocation,
  fastcgiRegistry,
} from "../fastcgi/mod.ts";
import {
  errorResponse,
  filterHeaders,
  hasHeadersFilter,
} from "../response/mod.ts";
import { expectsContinue } from "../routing/mod.ts";
import type { UpstreamGroup } from "../upstream/mod.ts";
import type { EngineRequest, EngineRouteDeps } from "./engine_request.ts";
import { filterStatus, withCharset } from "./content_answer.ts";
import type { FlowRequest } from "./flow_types.ts";
import type { RouteFlow } from "./route_flow.ts";
import { Subrequest } from "./subrequest.ts";

/** A proxied location's content, as the phases chose it. */
type ProxyContent = Extract<Content, { kind: "proxy" }>;

/** The proxy content handler, with every upstream group of the configuration. */
export class ProxyHandler {
  /** Every upstream group, made once (`upstream {}` and `proxy_pass host:port`). */
  readonly #registry: UpstreamRegistry;
  /**
   * How bodies are read whole before forwarding, made once; `undefined`
   * when they are streamed.
   */
  readonly #buffering: RequestBuffering | undefined;
  /**
   * The same settings whatever `proxy_request_buffering` says: a chunked
   * body to an HTTP/1.0 upstream is read whole first, as nginx reads it
   * (ngx_http_proxy_handler sets no `request_body_no_buffering` for a
   * chunked body unless the version is 1.1): HTTP/1.0 has no chunked
   * framing (RFC 9112 §6.1).
   */
  readonly #wholeBody: RequestBuffering | undefined;
  /** `client_body_timeout` of every body being read: one interval. */
  readonly #bodyDeadlines = new BodyDeadlines();
  /**
   * `client_body_timeout` of a body read ahead or streamed upstream
   * (`proxy_request_buffering off`), made once.
   */
  readonly #bodyTimeout: BodyTimeout | undefined;
  /** What proxying needs from the gateway, made once. */
  readonly #proxyContext: LocationProxyContext;
  /** What FastCGI needs, made once; `null` when nothing passes to it. */
  readonly #fastcgiContext: FastcgiContext | null;

  /**
   * @param conf The compiled configuration.
   * @param deps The counters, body settings and upstream hooks.
   */
  constructor(conf: HttpConf, deps: EngineRouteDeps) {
    const body = deps.body;
    this.#bodyTimeout = body === undefined ? undefined : {
      timeoutMs: body.clientBodyTimeoutMs,
      deadlines: this.#bodyDeadlines,
    };
    this.#wholeBody = body === undefined ? undefined : {
      bufferSize: body.clientBodyBufferSize,
      timeoutMs: body.clientBodyTimeoutMs,
      temp: new TempFiles(body.clientBodyTempPath),
      deadlines: this.#bodyDeadlines,
    };
    this.#buffering = body?.proxyRequestBuffering ? this.#wholeBody : undefined;
    this.#registry = new UpstreamRegistry(conf.upstreams, {
      ...(deps.onConnect ? { onConnect: deps.onConnect } : {}),
      ...(deps.transport ? { transport: deps.transport } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
    this.#fastcgiContext = conf.fastcgiUpstreams === undefined ? null : {
      registry: fastcgiRegistry(conf.fastcgiUpstreams, {
        ...(deps.onConnect ? { onConnect: deps.onConnect } : {}),
        ...(deps.now ? { now: deps.now } : {}),
      }),
      stats: deps.stats,
      ...(deps.stopping ? { stopping: deps.stopping } : {}),
      countsBody: deps.logger.accessCountsRequest,
    };
    this.#proxyContext = {
      registry: this.#registry,
      stats: deps.stats,
      caseless: conf.caseless,
      ...(deps.stopping ? { stopping: deps.stopping } : {}),
      countsBody: deps.logger.accessCountsRequest,
    };
  }

  /** The upstream groups, for shutdown and the status page. */
  get groups(): UpstreamGroup[] {
    return [...this.#registry.groups];
  }

  /** Closes every upstream connection and the body deadlines' interval. */
  close(): void {
    this.#registry.close();
    this.#fastcgiContext?.registry.close();
    this.#bodyDeadlines.stop();
  }

  /**
   * A proxied location's answer: a body sent with a GET or HEAD is
   * refused; else the request is forwarded.
   *
   * @param r The request (or an error page's copy of it).
   * @param content The location the phases chose.
   * @param f The request's part in the flow (a `RouteFlow`).
   * @returns The answer; its lines are written.
   */
  serve(
    r: Request,
    content: ProxyContent,
    f: FlowRequest,
  ): Promise<Response> {
    const { request } = f as RouteFlow;
    if (request.bodyInGet) {
      // Not nginx's refusal (nginx forwards the body): the gateway's own,
      // so at `error`, written at the default level (README, get-body).
      request.log({
        level: "error",
        message:
          `client sent body in ${r.method} request: the gateway's runtime reads no body of a GET or HEAD`,
      });
      return Promise.resolve(errorResponse(400, {
        head: r.method === "HEAD",
        headers: { connection: "close" },
      }));
    }
    // Forwarding reads the body, and Deno.serve answers the client's
    // `Expect: 100-continue` on the first read of a non-empty body.
    // (The client's fields as walked: an error page's copy is not what was
    // read.)
    request.continued = expectsContinue(request.fields, request.contentLength);
    return this.#proxy(r, content, f, request);
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
    content: ProxyContent,
    flow: FlowRequest,
    request: EngineRequest,
  ): Promise<Response> {
    const { vars } = flow;
    // A subrequest (SSI's include) sends its own URI, never the client's.
    const subrequest = request instanceof Subrequest;
    const changed = content.rewritten || vars.uri !== request.uri ||
      vars.args !== request.args || subrequest;
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
      buffering: this.#buffering ??
        (request.fields.transferEncoding !== null &&
            content.conf.fastcgi === undefined &&
            content.conf.proxyHttpVersion === "1.0"
          ? this.#wholeBody
          : undefined),
      bodyTimeout: this.#bodyTimeout,
      // Read when a rewritten Location needs it, not made per request.
      originOf: flow,
      // An error page's copy sends the client's body (nginx's page request
      // keeps it), read now or as an earlier location kept it.
      bodyOf: req === (flow as RouteFlow).req
        ? undefined
        : (flow as RouteFlow).req,
      // The client request's own object: what it kept goes with it.
      keeper: subrequest ? undefined : flow as RouteFlow,
      subrequest,
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
