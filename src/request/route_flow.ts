/**
 * A request's part in the engine's flow (`RouteFlow`): what the handler
 * read of it, its variables and chosen server, and what the flow learns on
 * the way (the location that answered, the access phases' state). One
 * object per request, handed to every content handler, so that none of
 * them needs a closure of its own per request.
 *
 * @module
 */

import type {
  DeclaredBody,
  LocationConf,
  RequestVars,
  ServerConf,
} from "../engine/mod.ts";
import type { KeptBody, RequestEvent } from "../proxy/mod.ts";
import { publicOrigin } from "../response/mod.ts";
import type { AccessState } from "./access_gate.ts";
import type { EngineRequest } from "./engine_request.ts";
import { Subrequest } from "./subrequest.ts";
import type { FieldsRead } from "../routing/mod.ts";
import type { FlowRequest } from "./flow_types.ts";

/** A request's part in the flow, with what the handler read of it. */
export class RouteFlow implements FlowRequest {
  /** The request's variables. */
  readonly vars: RequestVars;
  /** What the handler read of the request. */
  readonly request: EngineRequest;
  /** The request itself, for the access phase's fields and signal. */
  readonly req: Request;
  /** The server the request's name chose. */
  readonly server: ServerConf;
  /**
   * The limits' state once a location with access phases is reached; a
   * subrequest's is its main request's.
   */
  access: AccessState | null = null;
  /**
   * An SSI include's request: no access phase, whichever way it goes
   * (its `error_page`, an upstream's `X-Accel-Redirect`).
   */
  subrequest = false;
  /** Set by the flow: the location that answered. */
  answered?: LocationConf;
  /** Set by the flow while an `error_page` is answered. */
  errStatus?: number;
  /**
   * A TLS connection over HTTP/1.x: a file's answer asks to be written in
   * one piece in the fields it is made from (`response/tls_one_write.ts`).
   */
  oneWrite = false;
  /**
   * The body a location with error pages read, for the pages that may
   * follow; its temporary file is closed when the request ends.
   */
  keptBody?: KeptBody | undefined;
  /** The port the request came in on, for the origin. */
  readonly port: number;
  #origin: string | null = null;

  /**
   * @param vars The request's variables.
   * @param request What the handler read of the request.
   * @param req The request itself.
   * @param port The port it came in on.
   * @param server The server its name chose.
   */
  constructor(
    vars: RequestVars,
    request: EngineRequest,
    req: Request,
    port: number,
    server: ServerConf,
  ) {
    this.vars = vars;
    this.request = request;
    this.req = req;
    this.port = port;
    this.server = server;
  }

  /** See {@linkcode FlowRequest.dropKeepalive}. */
  dropKeepalive(): void {
    this.request.closing = true;
  }

  /**
   * The declared body: the request's own length, which the phases set to
   * 0 when they refuse it (`client_max_body_size`), so an error page's
   * upstream is sent none.
   */
  get declared(): DeclaredBody {
    return this.request;
  }

  /**
   * The body was read, whole or to where its client left or stalled: its
   * bytes count in `$request_length` (ngx_http_read_client_request_body
   * adds each to `r->request_length`). One declared without a length has
   * its size as the request's length from now on, for the limits of the locations an
   * internal redirect finds, `$content_length` (`add_header`, a FastCGI
   * `CONTENT_LENGTH`, the log lines, and `proxy_set_header` of a redirected
   * forwarding: the first location's fields are made before its body is
   * read, where nginx's already hold the length) and a redirected
   * forwarding, as nginx sets `headers_in.content_length_n` to
   * `rb->received` (ngx_http_request_body_chunked_filter); a body cut
   * short has what came, as nginx's `content_length_n` counts each piece
   * it parsed.
   *
   * @param length The bytes received.
   * @param unended The body was read unbuffered and did not end: nginx's
   * `r->reading_body` is still set, and `$content_length` finds nothing
   * (ngx_http_variable_content_length).
   */
  bodyRead(length: number, unended = false): void {
    const request = this.request;
    request.bodyReceived = length;
    if (request.contentLength !== null || unended) return;
    request.contentLength = length;
    request.lengthDigits = String(length);
    this.vars.bodyLength = length;
  }

  /** The client's conditional fields; `null` for a subrequest. */
  get conditional(): FieldsRead | null {
    return this.request instanceof Subrequest ? null : this.request.fields;
  }

  /**
   * Names the upstream in the request's later lines.
   *
   * @param upstream The `upstream:` field.
   */
  keepUpstream(upstream: string): void {
    const lines = this.request.lines;
    if (lines !== undefined) lines.upstream = upstream;
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
