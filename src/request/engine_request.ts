/**
 * What the engine's side of the handler is given: a request as the handler
 * read it (`EngineRequest`), where its error lines go (`LogScope`) and what
 * the gateway lends the engine (`EngineRouteDeps`). One file of types, so
 * the handler (`request_context.ts`) and every stage of the request path
 * read the same shapes without importing the route itself.
 *
 * @module
 */

import type { AccessLogConf, RequestVars } from "../engine/mod.ts";
import type { ErrorTarget, Logger, UpstreamTries } from "../log/mod.ts";
import type { RequestEvent } from "../proxy/mod.ts";
import type { GatewayStats } from "../status.ts";
import type { TransportFactory } from "../upstream/mod.ts";
import type { FieldsRead } from "../routing/mod.ts";

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
  /**
   * The declared body length, or `null`; a body without one, once read
   * whole, has its size here (`RouteFlow.bodyRead`).
   */
  contentLength: number | null;
  /** The length's digits, for the 413 line. */
  lengthDigits: string | null;
  /**
   * The body bytes read from the client for forwarding, whole or to where
   * the read stopped (nginx's `r->request_length` grows by each): set by
   * `RouteFlow.bodyRead`, 0 while none was read (a body discarded unread).
   */
  bodyReceived?: number;
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
   * The context of its lines, whose `upstream:` field the flow sets when
   * it redirects a proxied answer (a subrequest's is its own, its other
   * fields its main request's).
   */
  readonly lines?: { upstream: string | null };
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
   * Set by the flow when the gateway made a status after which nginx drops
   * keep-alive and an `error_page` answered it: the connection ends after
   * the page (ngx_http_special_response_handler runs before the redirect).
   */
  closing?: boolean;
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
