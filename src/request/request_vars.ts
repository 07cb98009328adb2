/**
 * A request's variables, made in one place: for a request served
 * (`EngineRoute.serve`), and for one refused before routing, as the logs
 * that take it see it: how far nginx had read it, for the `if=` of those
 * logs (`EngineRoute.refused` decides which logs they are).
 *
 * @module
 */

import type { ListenGroup, RequestVars, ServerConf } from "../engine/mod.ts";
import type { EngineRequest } from "./engine_request.ts";

/**
 * How far nginx had read a request it refused before routing: its logs
 * are those of the configuration current then.
 */
export type RefusalStage =
  /** The request line: no field read yet, the socket's default server. */
  | "line"
  /**
   * The line's target could not be decoded (`%00`, `..` above the root):
   * as `line`, but its method and protocol were read.
   */
  | "target"
  /** A field as it was read: still the default server (see head-lines-server). */
  | "field"
  /** Once every field is read: the server the `Host` field names. */
  | "head";

/** What nginx has read of the fields when the request line is refused. */
const NO_FIELDS = new Headers();
/** No regex has matched (never written to). */
const NO_CAPTURES: readonly string[] = Object.freeze([]);
/** No named captures (never written to). */
const NO_NAMED = Object.freeze({}) as Record<string, string>;

/** Where a request came in and what of it the variables read. */
export interface VarsSource {
  /** Its socket's servers. */
  listen: ListenGroup;
  /** The server chosen (or whose logs take a refused request). */
  server: ServerConf;
  /** The socket's port. */
  port: number;
  /** `$host` as read; empty for none (then the server's name). */
  host: string;
  /** The fields the variables read. */
  headers: Headers;
  /** The same fields as the head's check walked them, when they are `headers`' own. */
  fields: readonly string[] | null;
  /**
   * The server name regex's match, when one matched: its captures, and
   * its named captures as variables (ngx_http_regex_exec, from
   * ngx_http_find_virtual_server).
   */
  captures:
    | (readonly (string | undefined)[] & {
      groups?: Record<string, string | undefined>;
    })
    | null;
  /** `$server_protocol`. */
  protocol: string;
}

/**
 * A request's variables before any phase ran.
 *
 * @param req The request.
 * @param request What the handler read of it.
 * @param at Where it came in, and what of it is read.
 * @returns The variables.
 */
export function requestVars(
  req: Request,
  request: EngineRequest,
  at: VarsSource,
): RequestVars {
  const { listen, server, captures } = at;
  return {
    method: req.method,
    requestUri: request.target,
    uri: request.uri,
    args: request.args,
    headers: at.headers,
    fields: at.fields,
    fieldNames: server.conf.fieldNames,
    remoteAddr: request.client,
    remotePort: request.clientPort,
    serverAddr: listen.hostname,
    serverPort: at.port,
    serverName: server.serverName,
    scheme: listen.ssl ? "https" : "http",
    protocol: at.protocol,
    host: at.host === "" ? server.serverName : at.host,
    proxyHost: "",
    documentRoot: "",
    requestFilename: "",
    remoteUser: "",
    captures: captures === null
      ? NO_CAPTURES
      : Array.from(captures, (c) => c ?? ""),
    named: NO_NAMED,
    location: server.conf,
    // Present from the start: a field added later changes the object's
    // shape mid-request, and code optimised for one shape is thrown away.
    vars: captures?.groups === undefined
      ? undefined
      : namedVars(captures.groups),
    mapValues: undefined,
    sentFields: undefined,
    argsSet: undefined,
    requestId: undefined,
    log: undefined,
    unparsed: undefined,
  };
}

/** A server name regex's named captures as variables (lower case names). */
function namedVars(
  groups: Record<string, string | undefined>,
): Map<string, string> {
  const vars = new Map<string, string>();
  for (const k in groups) vars.set(k.toLowerCase(), groups[k] ?? "");
  return vars;
}

/**
 * The variables of a request refused before routing, for `if=` of its
 * access logs: what nginx had read of it then (no field after a bad
 * request line; no method, URI or protocol when the line could not be
 * read; `$uri` empty and no `$request_uri` or `$args` when its target
 * could not be decoded).
 *
 * @param req The request.
 * @param request What the handler read of it.
 * @param at Its socket's servers, the server whose logs take it, the port,
 * `$host` as read (empty for none) and how far it was read.
 * @returns The variables.
 *
 * @example Usage
 * ```ts
 * import { refusedVars } from "./request_vars.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const server = { serverName: "a", conf: {} } as never;
 * const vars = refusedVars(
 *   new Request("http://h/x", { headers: { "x-log": "1" } }),
 *   { target: "/x", uri: "", args: "", client: "127.0.0.1", clientPort: 1 } as never,
 *   { listen: { hostname: "127.0.0.1", ssl: false } as never, server, port: 80, host: "", stage: "line" },
 * );
 * strictEqual(vars.headers.get("x-log"), null);
 * strictEqual(vars.host, "a");
 * ```
 */
export function refusedVars(
  req: Request,
  request: EngineRequest,
  at: {
    listen: ListenGroup;
    server: ServerConf;
    port: number;
    host: string;
    stage: RefusalStage;
  },
): RequestVars {
  const fieldsRead = at.stage === "field" || at.stage === "head";
  const vars = requestVars(req, request, {
    listen: at.listen,
    server: at.server,
    port: at.port,
    host: at.host,
    headers: fieldsRead ? req.headers : NO_FIELDS,
    fields: null,
    captures: null,
    protocol: "HTTP/1.1",
  });
  if (!fieldsRead) vars.unparsed = at.stage as "line" | "target";
  return vars;
}
