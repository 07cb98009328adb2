/**
 * Proxied locations built by hand for the proxy's tests, with nginx's
 * defaults filled in, and a small request flow around `proxyLocation`
 * (server → location → content, no rewrite) served on 127.0.0.1:0.
 *
 * @module
 */

import {
  compileValue,
  findLocation,
  type HttpConf,
  indexLocations,
  type LocationConf,
  type LocationIndex,
  type ProxyRedirect,
  type RequestVars,
  runPhases,
  type ServerConf,
  type UpstreamConf,
  Variables,
} from "../../src/engine/mod.ts";
import { DEFAULT_NEXT_UPSTREAM } from "../../src/upstream/mod.ts";
import { proxyLocation, UpstreamRegistry } from "../../src/proxy/mod.ts";
import { fastcgiLocation, fastcgiRegistry } from "../../src/fastcgi/mod.ts";
import { errorResponse } from "../../src/response/mod.ts";
import type {
  LocationProxyContext,
  RequestEvent,
} from "../../src/proxy/mod.ts";
import { decodeTarget } from "../../src/routing/mod.ts";
import { locationConf as nginxLocation, varsWith } from "../_location_conf.ts";

const scope = new Variables(new Map(), new Set());

/** A value compiled as nginx.conf text would be. */
export function value(text: string): ReturnType<typeof compileValue> {
  return compileValue(text, scope);
}

/** What a test says about a proxied location. */
export interface LocationSpec {
  /** The location name (a prefix). */
  name: string;
  /** The `proxy_pass` URL, e.g. `http://backend/` or `http://127.0.0.1:9/v1/`. */
  pass: string;
  /** `proxy_set_header` pairs in order. */
  set?: [string, string][];
  /** `proxy_http_version`. */
  version?: "1.0" | "1.1";
  /** `proxy_redirect` pairs; `default` when absent, `[]` is `off`. */
  redirect?: ProxyRedirect[];
  /** `proxy_hide_header`. */
  hide?: string[];
  /** `proxy_pass_header`. */
  passHeader?: string[];
  /** `proxy_intercept_errors` with these `error_page` codes. */
  intercept?: number[];
  /** `proxy_buffer_size`. */
  bufferSize?: number;
  /** `proxy_*_timeout` in ms. */
  timeouts?: { connectMs: number; sendMs: number; readMs: number };
}

/** Splits `http://host[:port][/uri]`. */
function splitPass(pass: string): { hostPort: string; uri: string | null } {
  const rest = pass.slice("http://".length);
  const slash = rest.indexOf("/");
  return slash < 0
    ? { hostPort: rest, uri: null }
    : { hostPort: rest.slice(0, slash), uri: rest.slice(slash) };
}

/**
 * A proxied location with nginx's defaults: `Host: $proxy_host` and
 * `Connection: close` after the location's own fields, HTTP/1.0, 60 s
 * timers, a 4k header buffer, `proxy_redirect default`.
 */
export function locationConf(spec: LocationSpec): LocationConf {
  const { hostPort, uri } = splitPass(spec.pass);
  const set = (spec.set ?? []).map(([n, v]) => [n, value(v)] as const);
  for (
    const [name, text] of [["Host", "$proxy_host"], ["Connection", "close"]]
  ) {
    if (!set.some(([n]) => n.toLowerCase() === name!.toLowerCase())) {
      set.push([name!, value(text!)] as const);
    }
  }
  const redirect: ProxyRedirect[] = spec.redirect ??
    (uri === null
      ? [{ kind: "text", from: value(`${spec.pass}/`), to: value("/") }]
      : [{ kind: "text", from: value(spec.pass), to: value(spec.name) }]);
  return nginxLocation({
    name: spec.name,
    locations: indexLocations([], false),
    root: value("html"),
    index: [],
    types: new Map(),
    defaultType: "text/plain",
    charsetTypes: new Set(),
    errorPages: new Map(
      (spec.intercept ?? []).map((
        c,
      ) => [c, { uri: value("/e"), overwrite: null }]),
    ),
    proxyPass: {
      scheme: "http",
      group: hostPort,
      proxyHost: hostPort.endsWith(":80") ? hostPort.slice(0, -3) : hostPort,
      uri,
      dynamic: null,
      url: null,
      text: spec.pass,
    },
    proxySetHeaders: set,
    proxyHttpVersion: spec.version ?? "1.0",
    proxyRedirect: redirect,
    proxyHideHeaders: new Set(spec.hide ?? []),
    proxyPassHeaders: new Set(spec.passHeader ?? []),
    proxyTimeouts: spec.timeouts ??
      { connectMs: 60_000, sendMs: 60_000, readMs: 60_000 },
    proxyBufferSize: spec.bufferSize ?? 4096,
    proxyIgnoreHeaders: new Set(),
    proxyInterceptErrors: spec.intercept !== undefined,
    proxyNextUpstream: DEFAULT_NEXT_UPSTREAM,
  });
}

/** One implicit group per `host:port`, as nginx makes for `proxy_pass`. */
export function implicitUpstream(hostPort: string): UpstreamConf {
  const colon = hostPort.lastIndexOf(":");
  const hostname = hostPort.slice(0, colon);
  const port = Number(hostPort.slice(colon + 1));
  return {
    name: hostPort,
    servers: [{
      address: hostPort,
      hostname,
      port,
      weight: 1,
      maxFails: 1,
      failTimeoutMs: 10_000,
      backup: false,
      down: false,
    }],
    keepalive: 0,
    explicit: false,
  };
}

/** The variables of a request as the flow fills them. */
export function requestVars(
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  serverPort: number,
): RequestVars | null {
  const host = req.headers.get("host") ?? "";
  const target = req.url.slice(`http://${host}`.length);
  const decoded = decodeTarget(target);
  if (decoded.kind !== "uri") return null;
  return varsWith({
    method: req.method,
    requestUri: target,
    uri: decoded.uri,
    args: decoded.args,
    headers: req.headers,
    remoteAddr: info.remoteAddr.hostname,
    remotePort: info.remoteAddr.port,
    serverPort,
    host: host.replace(/:\d+$/, "").toLowerCase(),
  });
}

/** A gateway of proxied locations on 127.0.0.1:0. */
export interface LocationGateway extends AsyncDisposable {
  /** Its port. */
  port: number;
  /** The error lines' messages, as `level: message [upstream]`. */
  errors: string[];
  /** Its upstream groups (their servers' balancing state). */
  registry: UpstreamRegistry;
  /** The groups `fastcgi_pass` names, with FastCGI transports. */
  fastcgiRegistry: UpstreamRegistry;
}

/**
 * Serves the locations: the longest prefix wins; its result's status goes
 * out as the built-in error page.
 */
export function serveLocations(
  confs: LocationConf[],
  upstreams: UpstreamConf[],
  context: Pick<LocationProxyContext, "upgradeWebSocket"> = {},
): LocationGateway {
  return serveIndex(
    indexLocations(confs, false),
    new Map(upstreams.map((u) => [u.name, u])),
    new Map(),
    context,
  );
}

/**
 * Serves a level's locations: without a compiled server, the longest prefix
 * wins; with one, the engine's phases run (rewrite, try_files, internal
 * redirects) and say which location proxies.
 */
function serveIndex(
  where: LocationIndex | ServerConf,
  upstreams: ReadonlyMap<string, UpstreamConf>,
  fastcgiUpstreams: ReadonlyMap<string, UpstreamConf> = new Map(),
  context: Pick<LocationProxyContext, "upgradeWebSocket"> = {},
): LocationGateway {
  const registry = new UpstreamRegistry(upstreams);
  const fastcgi = fastcgiRegistry(fastcgiUpstreams);
  const errors: string[] = [];
  const stats = { failed: () => {} };
  let port = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req, info) => {
      const vars = requestVars(req, info, port);
      if (vars === null) return errorResponse(400);
      const chosen = choose(where, vars);
      if (chosen === null) return errorResponse(404);
      const log = (e: RequestEvent) =>
        errors.push(
          `${e.level}: ${e.message}${e.upstream ? ` ${e.upstream}` : ""}`,
        );
      const request = {
        ...chosen,
        vars,
        log,
        contentLength: req.headers.has("content-length")
          ? Number(req.headers.get("content-length"))
          : null,
        // Asked as an SSI include's request (LocationRequest.subrequest).
        subrequest: req.headers.has("x-test-subrequest"),
      };
      const answer =
        await (chosen.conf.fastcgi === undefined
          ? proxyLocation(req, request, { registry, stats, ...context })
          : fastcgiLocation(req, request, { registry: fastcgi, stats }));
      if (!request.subrequest) return answer;
      // An include's answer is read by the SSI filter, not sent: read here,
      // its body's failure told as text.
      const text = await answer.text().catch((e) => `failed: ${e.message}`);
      return new Response(text, { status: answer.status });
    },
  );
  port = server.addr.port;
  return {
    port,
    errors,
    registry,
    fastcgiRegistry: fastcgi,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      registry.close();
      fastcgi.close();
    },
  };
}

/**
 * Serves the first server of a compiled nginx.conf's locations and its
 * upstream groups through the same small flow.
 */
export function serveCompiled(conf: HttpConf): LocationGateway {
  return serveIndex(
    conf.servers[0]!,
    conf.upstreams,
    conf.fastcgiUpstreams ?? new Map(),
  );
}

/** What the flow hands the proxy: the location and the URI's state. */
interface Chosen {
  conf: LocationConf;
  rewritten: boolean;
  internal: boolean;
  breakInLocation: boolean;
}

/**
 * The proxied location for a request, or `null`. With the engine's phases
 * the URI's state is read back as nginx keeps it: changed (sticky across
 * `last` and internal redirects), internal, and `rewrite … break` in the
 * final location (the phases' `rewritten`).
 */
function choose(
  where: LocationIndex | ServerConf,
  vars: RequestVars,
): Chosen | null {
  if (!("listens" in where)) {
    const found = findLocation(where, vars.uri, false);
    return found.kind === "location"
      ? {
        conf: found.conf,
        rewritten: false,
        internal: false,
        breakInLocation: false,
      }
      : null;
  }
  const uri = vars.uri;
  const args = vars.args;
  const state = { cycles: 0, internal: false, caseless: false };
  const content = runPhases(where, vars, {
    state,
    io: { family: "linux", fileKind: () => null },
  });
  if (content.kind !== "proxy") return null;
  const changed = vars.uri !== uri || vars.args !== args || content.rewritten;
  return {
    conf: content.conf,
    rewritten: changed,
    internal: changed || state.internal,
    breakInLocation: content.rewritten,
  };
}
