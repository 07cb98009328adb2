/**
 * One request's access line: what it needs from the request (read before the
 * exchange ends), the status and bytes sent, and when it is written (the
 * response sent, the tunnel closed, or the request given up on at shutdown).
 *
 * @module
 */

import { parseBasicCredentials } from "../access/mod.ts";
import { copyFields, fieldLines, firstLine } from "../runtime/mod.ts";
import type { RequestVars } from "../engine/mod.ts";
import {
  type AccessEvent,
  type AccessTarget,
  joinedFieldLines,
  type Logger,
  requestHeadBytes,
  type SentBody,
  type SentResponse,
  UpstreamTries,
} from "../log/mod.ts";
import { DISCARD_WANTS, discardedLength } from "./discarded_body.ts";
import {
  isStreamedResponse,
  isUnread,
  makeResponse,
  type MeteredBody,
  meteredBody,
} from "../response/mod.ts";

/** `HTTP/1.1 100 Continue` and the blank line. */
const CONTINUE_BYTES = 25;

/** Requests whose access line is pending, for shutdown to give up on. */
export interface InFlightRegistry {
  /** Keeps a request's "give up" callback; returns its release. */
  add(abandon: () => void): () => void;
  /** The gateway is shutting down: what fails now is not the client's doing. */
  readonly stopping?: boolean;
}

/** The request's part of its access line. */
export interface AccessRequest {
  /** The client's address. */
  client: string;
  /** The request line as logged. */
  request: string;
  /** The `Referer` field, or `null`. */
  referrer: string | null;
  /**
   * The request's variables once the engine chose its server (read when
   * the line is written: `$uri` is then the last internal redirect's).
   */
  vars?: RequestVars | null;
  /** The request's clock in ms when it arrived, read once; else read here. */
  now?: number | undefined;
  /**
   * The body bytes read from the client, whole or to where reading
   * stopped (`RouteFlow.bodyRead`); 0 when none was read.
   */
  readonly bodyReceived?: number;
  /** `$connection`: its connection's number. */
  readonly connection?: number;
  /** `$connection_requests`: the requests its connection has carried. */
  readonly connectionRequests?: number;
}

/**
 * An access line waiting for its request to end. Until it is written it can
 * be given up on at shutdown: then the line says what was sent so far,
 * `000 0` before any response (nginx's worker_shutdown_timeout).
 */
export class PendingAccessLine {
  #logger: Logger;
  #fields: AccessRequest;
  #remoteUser: string | undefined;
  #userAgent: string | null;
  #status = 0;
  /** Nobody reads the answer: no head, no body counted. */
  #unread = false;
  #bytes = 0;
  #meter: MeteredBody | null = null;
  #logged = false;
  #release: (() => void) | undefined;
  #headers: Headers | undefined;
  /** The request's own fields, which the copy stands in for once it ends. */
  #requestHeaders: Headers | undefined;
  /** The response as sent, for a line that may read its head. */
  #sent: SentResponse | undefined;
  #startMs: number | undefined;
  /** Bytes of an interim `100 Continue` sent before the response. */
  #interim = 0;
  /**
   * The request's upstream tries, for a `log_format` that may read
   * `$upstream_*`; `null` under `combined`, which reads none.
   */
  readonly upstream: UpstreamTries | null = null;
  /** The answering location's logs; `null` for the default one. */
  #targets: readonly AccessTarget[] | null = null;
  /** Whether nginx had read the request's fields (see `fieldsUnread`). */
  #fieldsRead = true;
  /**
   * The request's field lines as received, for `$request_length`; kept
   * only when a line reads it (`Headers`' own list: nothing is copied).
   */
  #fieldLines: readonly unknown[] | undefined;

  /**
   * Reads what the line needs from the request now: once the exchange is
   * over, Deno's request headers throw "Request closed".
   *
   * @param req The request.
   * @param logger Where the line goes.
   * @param fields The client, request line and referrer.
   * @param inFlight Where shutdown finds the pending line.
   */
  constructor(
    req: Request,
    logger: Logger,
    fields: AccessRequest,
    inFlight: InFlightRegistry | undefined,
  ) {
    this.#logger = logger;
    this.#fields = fields;
    // The first line of each, as nginx 1.22 reads them (a repeated
    // Authorization is refused, its line still shows the first's user).
    const headers = req.headers;
    this.#remoteUser = parseBasicCredentials(
      firstLine(headers, "authorization", headers.get("authorization")),
    )?.user;
    this.#userAgent = firstLine(
      headers,
      "user-agent",
      headers.get("user-agent"),
    );
    if (logger.accessNeedsFields) {
      // A line reading the fields needs them after the exchange, when
      // Deno's request headers can no longer be read: copied only then
      // (decided at load, LogsSeen.copiesFields).
      if (logger.accessCopiesFields) {
        this.#requestHeaders = req.headers;
        this.#headers = copyFields(this.#requestHeaders);
      }
      this.#startMs = fields.now ?? Date.now();
      this.upstream = new UpstreamTries();
      // The list Deno keeps is read once the exchange is over, when the
      // fields themselves no longer can be.
      if (logger.accessCountsRequest) {
        this.#fieldLines = fieldLines(headers) ?? joinedFieldLines(headers);
      }
    }
    this.#release = inFlight?.add(this.write);
  }

  /**
   * Writes the line to these logs (the answering location's) instead of
   * the default one.
   */
  writeTo(targets: readonly AccessTarget[]): void {
    this.#targets = targets;
  }

  /**
   * The request was refused at its request line: nginx had read none of
   * its fields, so the line shows none (`$http_*`, `$remote_user`, the
   * referrer and agent of `combined` are empty).
   */
  fieldsUnread(): void {
    this.#fieldsRead = false;
    this.#remoteUser = undefined;
    this.#userAgent = null;
    if (this.#headers) this.#headers = new Headers();
  }

  /** Writes no line: the location has `access_log off`. */
  cancel(): void {
    this.#logged = true;
    this.#release?.();
  }

  /** Writes the line once, with what was sent so far. */
  write = (): void => {
    if (this.#logged) return;
    this.#logged = true;
    this.#release?.();
    const { client, request } = this.#fields;
    const vars = this.#fields.vars ?? undefined;
    // The exchange is over: the variables read the copy of the fields
    // (Deno's own throw "Request closed" now).
    if (vars !== undefined && this.#headers !== undefined) {
      if (vars.headers === this.#requestHeaders) vars.headers = this.#headers;
    }
    const referrer = this.#fieldsRead ? this.#fields.referrer : null;
    const status = this.#status;
    const event: AccessEvent = {
      remoteAddr: client,
      ...(this.#remoteUser === undefined
        ? {}
        : { remoteUser: this.#remoteUser }),
      request,
      status,
      bodyBytesSent: this.#unread
        ? 0
        : (this.#meter ? this.#meter.sent() : this.#bytes) + this.#interim,
      ...(referrer === null ? {} : { referrer }),
      ...(this.#userAgent === null ? {} : { userAgent: this.#userAgent }),
      ...(this.#headers ? { headers: this.#headers } : {}),
      // An answer nobody reads (a client gone, a close without an answer)
      // has no head either: nginx's `$bytes_sent` 0.
      ...(this.#sent === undefined || this.#unread ? {} : { sent: this.#sent }),
      ...(this.#startMs === undefined ? {} : { startMs: this.#startMs }),
      connection: this.#fields.connection ?? 0,
      connectionRequests: this.#fields.connectionRequests ?? 0,
      ...(this.upstream === null || this.upstream.empty
        ? {}
        : { upstream: this.upstream.list() }),
      vars,
    };
    // Only for a line that reads it (its own property then: nothing is
    // made for the others). A request line nginx could not parse (a 414,
    // an invalid method) counts nothing: r->request_length is set once the
    // line is parsed (ngx_http_process_request_line).
    if (this.#fieldLines !== undefined) {
      event.requestLength = vars?.unparsed === "line" ? 0 : requestHeadBytes(
        request,
        this.#fieldsRead ? this.#fieldLines : null,
      ) + (this.#fields.bodyReceived ?? 0);
    }
    if (this.#targets === null) this.#logger.access(event);
    else this.#logger.accessTo(this.#targets, event);
  };

  /**
   * Counts the `HTTP/1.1 100 Continue` sent before the response (25 bytes),
   * as nginx counts it in `$body_bytes_sent` (its `ngx_http_test_expect`
   * sends it on the request's connection).
   */
  continued(): void {
    this.#interim = CONTINUE_BYTES;
  }

  /**
   * Takes the response to send: counts its body, and writes the line when
   * the response is sent or, for a tunnel, when the tunnel closes.
   *
   * @param req The request.
   * @param response The response.
   * @param completed `Deno.ServeHandlerInfo.completed`.
   * @param tunnel Resolves with the bytes relayed when a tunnel closes.
   * @returns The response to send (its body wrapped to count it, if needed).
   */
  settle(
    req: Request,
    response: Response,
    completed: Promise<void>,
    tunnel: Promise<number> | undefined,
  ): Response {
    const length = response.headers.get("content-length");
    let body: SentBody = "bytes";
    // A byte body with a length is sent whole: its length is the count.
    // Read response.body only for streams and bodies without a length: the
    // getter turns a byte body into a stream, which takes Deno.serve off its
    // fast path for the body.
    if (length !== null && !isStreamedResponse(response)) {
      // No body goes with a HEAD's answer nor a status that has none (a
      // relayed 205 keeps its upstream's length field, which Deno.serve
      // drops with the body: RFC 9110 §15.3.6).
      const status = response.status;
      this.#bytes = req.method === "HEAD" || status === 304 || status === 204 ||
          status === 205
        ? 0
        : Number(length);
    } else if (response.body !== null && req.method !== "HEAD") {
      // A HEAD answer's body is never sent (a gzipped one has no length
      // and would count its last chunk).
      this.#meter = meteredBody(response.body, length === null);
      response = makeResponse(this.#meter.body, response);
      body = "stream";
    } else {
      body = response.body === null
        ? "empty"
        : isStreamedResponse(response)
        ? "stream"
        : "bytes";
    }
    this.#status = response.status;
    // A 200 is never one: the common answer reads no WeakSet.
    this.#unread = response.status >= 400 && isUnread(response);
    // Kept for a format beyond `combined` (only those read the head or
    // the fields sent); the head is rebuilt only if the line reads it.
    if (this.#startMs !== undefined && !this.#unread) {
      this.#sent = {
        status: response.status,
        headers: response.headers,
        body,
        head: req.method === "HEAD",
        connection: req.headers.get("connection"),
      };
    }
    if (tunnel) {
      // nginx writes the line when the tunnel closes: 101 and the bytes relayed.
      tunnel.then((bytes) => {
        this.#bytes = bytes;
        this.write();
      });
    } else if (this.#logger.accessDiscardsBody && this.#discards(req)) {
      // Taken now: once the exchange is over the request can no longer give it.
      const body = req.body;
      const vars = this.#fields.vars!;
      const write = this.write;
      completed.then(() => discardedLength(body), () => DISCARD_WANTS).then(
        (length) => {
          vars.bodyLength = length;
          write();
        },
      );
    } else {
      completed.then(this.write, this.write);
    }
    return response;
  }

  /**
   * A chunked body nothing read (a `return`, a static file): nginx
   * discards it before the line (ngx_http_discard_request_body), and its
   * `$content_length` is then what the discarding left.
   */
  #discards(req: Request): boolean {
    const vars = this.#fields.vars;
    return vars !== undefined && vars !== null &&
      vars.bodyLength === undefined && !req.bodyUsed &&
      req.headers.has("transfer-encoding");
  }
}
