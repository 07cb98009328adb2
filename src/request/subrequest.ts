/**
 * An SSI include's request (nginx's subrequest, `ngx_http_subrequest`):
 * the main request's client, fields and error-line context, its own URI
 * and arguments, no body, and no access line or upstream tries of its own
 * (the main request's line is the one written). nginx's subrequest shares
 * the main request's body (`r->request_body`), which a proxied page read:
 * its upstream gets it again with the include's GET. The gateway keeps no
 * body past the main request's forwarding (a named difference in the
 * README's `ssi` item).
 *
 * @module
 */

import type { EngineRequest } from "./engine_request.ts";
import type { RequestVars } from "../engine/mod.ts";
import type { SsiStore } from "../ssi/mod.ts";

/** The budget of one main request's includes. */
export interface IncludeBudget {
  /** Includes made so far, at every depth. */
  made: number;
  /** Its SSI variables and captures, the page's and every include's. */
  store: SsiStore;
}

/** Includes one main request may make in all (nginx counts to 65535). */
export const MAX_INCLUDES = 200;
/**
 * How deep includes nest: nginx gives a request `NGX_HTTP_MAX_SUBREQUESTS`
 * + 1 (51) and each subrequest one less, so the 51st level is the last.
 */
export const MAX_INCLUDE_DEPTH = 51;

/** A subrequest as the engine's handlers read a request. */
export class Subrequest implements EngineRequest {
  readonly client: string;
  readonly clientPort: number;
  readonly host: string | null;
  readonly target: string;
  readonly uri: string;
  readonly args: string;
  readonly contentLength = null;
  readonly lengthDigits = null;
  readonly bodyInGet = false;
  readonly tries = null;
  readonly served2: boolean;
  readonly clientFields: readonly string[] | null;
  readonly log: EngineRequest["log"];
  /** Its own `upstream:` field, kept by the flow (`RouteFlow.keepUpstream`). */
  readonly lines: { upstream: string | null } = { upstream: null };
  at: EngineRequest["at"];
  continued = false;
  accessLogs = null;
  vars: RequestVars | null = null;
  readonly #main: EngineRequest;

  /**
   * @param parent The request whose answer includes this one: the main
   * request or an include.
   * @param uri The URI to include, decoded.
   * @param args Its arguments, without `?`.
   */
  constructor(parent: EngineRequest, uri: string, args: string) {
    // A nested include writes through the main request's writer, not its
    // parent include's: that one would name the parent's URI and upstream
    // (nginx names the request writing the line, r->uri and r->upstream).
    const main = parent instanceof Subrequest ? parent.#main : parent;
    this.#main = main;
    this.client = main.client;
    this.clientPort = main.clientPort;
    this.host = main.host;
    this.uri = uri;
    this.args = args;
    this.target = args === "" ? uri : `${uri}?${args}`;
    this.served2 = main.served2;
    this.clientFields = main.clientFields ?? null;
    // nginx's lines about a subrequest name its URI after the request's,
    // and the upstream the subrequest's own pass left before a redirect
    // (ngx_http_log_error_handler reads the current request's r->upstream),
    // not the main request's.
    const lines = this.lines;
    this.log = (event) => {
      const subrequest = this.vars?.uri ?? uri;
      const upstream = lines.upstream;
      main.log(
        upstream === null
          ? { ...event, subrequest }
          : { upstream, ...event, subrequest },
      );
    };
    this.at = main.at;
  }

  /** The main request's fields as its walk read them. */
  get fields(): EngineRequest["fields"] {
    return this.#main.fields;
  }
}
