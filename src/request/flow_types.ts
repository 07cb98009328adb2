/**
 * What the request flow (`request_flow.ts`) and its content handlers
 * share: a request's part in the flow (`FlowRequest`), the handlers the
 * phases' decision is handed to, and what the flow is given at start-up.
 *
 * @module
 */

import type {
  Content,
  DeclaredBody,
  LocationConf,
  PhaseIo,
  RequestVars,
} from "../engine/mod.ts";
import type { RequestEvent } from "../proxy/mod.ts";
import type { ConditionalFields } from "../response/mod.ts";

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
   * Names the upstream a proxied answer came from in every later line of
   * the request (nginx keeps `r->upstream` through an internal redirect).
   */
  keepUpstream?(upstream: string): void;
  /**
   * The origin absolute redirects name (`http://host:port`), as nginx's
   * `absolute_redirect on` with `server_name_in_redirect off`.
   */
  origin: string;
  /**
   * The body the request declared, which the phases check against each
   * location's `client_max_body_size` (absent: none, as a subrequest).
   */
  readonly declared?: DeclaredBody;
  /** Set by the flow: the location that answered, for the log phase. */
  answered?: LocationConf;
  /**
   * Set by the flow while an `error_page` is answered: the status the page
   * goes out with (nginx's `r->err_status`), which is the one the headers
   * filter sees (ngx_http_send_header), not the page's own 200.
   */
  errStatus?: number;
  /**
   * The client's conditional fields, for nginx's not-modified filter on
   * the 200s the phases make; `null` (or absent) for a subrequest, which
   * the filter leaves alone (`r != r->main`).
   */
  readonly conditional?: ConditionalFields | null;
  /**
   * nginx's `r->keepalive = 0` for a status the gateway made that drops
   * keep-alive (`dropsKeepalive`), set before an `error_page` answers it:
   * the connection ends after the page. Absent for a subrequest.
   */
  dropKeepalive?(): void;
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
