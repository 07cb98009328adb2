/**
 * One request as the handler's steps and the engine see it
 * (`RequestContext`), and the context its error lines carry
 * (`ErrorLines`).
 *
 * @module
 */

import type { EngineRequest, LogScope } from "./request/mod.ts";
import type {
  ErrorEvent,
  ErrorTarget,
  Logger,
  UpstreamTries,
} from "./log/mod.ts";
import type { RequestEvent } from "./proxy/mod.ts";
import {
  type CheckEvent,
  type ContentLength,
  type FieldsRead,
  hasUnforwardableBody,
  type LineVerdict,
  readFields,
} from "./routing/mod.ts";

/**
 * What a request's error lines carry before their own fields (nginx's
 * `client:`, `server:`, `request:`, `host:`, `referrer:`), apart from the
 * request: the line writer closes over this alone. A closure over the
 * whole request, made for every request, kept the request (its `Request`,
 * its response) alive through young-generation collections until the next
 * full one (`--trace-gc-nvp`, small static files at c50: 350 KB surviving
 * each scavenge instead of 2 KB).
 */
export class ErrorLines {
  /**
   * Whose error logs take the lines now, and the name in their `server:`
   * field: the socket's default server, then the request's variables.
   */
  at: LogScope;
  /**
   * The `upstream:` field a pass left before an internal redirect (nginx
   * keeps `r->upstream`), added to every later line of the request that
   * names none (an include's lines are not its); `null` until the flow
   * keeps one.
   */
  upstream: string | null = null;
  readonly #logger: Logger;
  readonly #errorLogs: readonly ErrorTarget[];
  readonly #connection: number;
  readonly #client: string;
  readonly #request: string;
  readonly #host: string | null;
  readonly #referrer: string | null;

  /**
   * @param logger Where lines go.
   * @param fields The request's context.
   */
  constructor(logger: Logger, fields: {
    connection: number;
    client: string;
    at: LogScope;
    errorLogs: readonly ErrorTarget[];
    request: string;
    host: string | null;
    referrer: string | null;
  }) {
    this.#logger = logger;
    this.#connection = fields.connection;
    this.#client = fields.client;
    this.at = fields.at;
    this.#errorLogs = fields.errorLogs;
    this.#request = fields.request;
    this.#host = fields.host;
    this.#referrer = fields.referrer;
  }

  /** nginx's `*N`: the connection's number (`$connection`). */
  get connection(): number {
    return this.#connection;
  }

  /**
   * Writes a line with the request's context; a line about the request
   * line has no header fields, as nginx's.
   *
   * @param event The line's own fields.
   * @param fields Add `host` and `referrer`.
   */
  write(event: RequestEvent, fields: boolean): void {
    const host = this.#host;
    const referrer = this.#referrer;
    const at = this.at;
    // An include's line names its own upstream or none: the main
    // request's `r->upstream` is not the subrequest's.
    const upstream = event.subrequest === undefined ? this.upstream : null;
    this.#logger.errorTo(
      at.location?.errorLogs ?? this.#errorLogs,
      {
        connection: this.#connection,
        client: this.#client,
        server: at.serverName,
        request: this.#request,
        ...(upstream === null ? {} : { upstream }),
        ...(!fields || host === null ? {} : { host }),
        ...(!fields || referrer === null ? {} : { referrer }),
        ...event,
      } satisfies ErrorEvent,
    );
  }
}

/** The line writer: it holds the lines' context, nothing of the request. */
function lineWriter(lines: ErrorLines): (event: RequestEvent) => void {
  return (event) => lines.write(event, true);
}

/** What {@linkcode RequestContext} is made from. */
export interface RequestFields {
  /** The request. */
  req: Request;
  /** `Deno.serve`'s info on the request. */
  info: Deno.ServeHandlerInfo<Deno.NetAddr>;
  /** The request's clock in ms, read once. @default {Date.now()} */
  now?: number;
  /** Its fields as one walk read them; walked when first asked for if absent. */
  fields?: FieldsRead;
  /** The client's address. */
  client: string;
  /** The client's port. */
  clientPort: number;
  /** The `Host` field, or `null`. */
  host: string | null;
  /** The `Referer` field, or `null`. */
  referrer: string | null;
  /** The request target as received. */
  target: string;
  /** An absolute-form request line's authority, else `null`. */
  authority: string | null;
  /** The request came over HTTP/2. */
  http2: boolean;
  /** Served over HTTP/2 on a TLS socket. */
  served2: boolean;
  /** The request line as logged. */
  request: string;
  /** nginx's verdict on the request line. */
  line: LineVerdict;
}

/**
 * One request, as the handler's steps and the engine see it: one object
 * per request, without closures (the engine's answers are its fields, set
 * in place; the line writer is made when first asked for).
 *
 * @example Usage
 * ```ts
 * import { ErrorLines, RequestContext } from "./request_context.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const written: unknown[] = [];
 * const logger = {
 *   errorTo: (_logs: unknown, e: unknown) => written.push(e),
 * } as never;
 * const lines = new ErrorLines(logger, {
 *   connection: 1, client: "127.0.0.1",
 *   at: { serverName: "localhost" }, errorLogs: [],
 *   request: "GET / HTTP/1.1", host: "h", referrer: null,
 * });
 * const ctx = new RequestContext({
 *   req: new Request("http://h/"), info: {} as never, client: "127.0.0.1", clientPort: 5000, host: "h",
 *   referrer: null, target: "/", authority: null, http2: false, served2: false,
 *   request: "GET / HTTP/1.1", line: { kind: "ok" },
 * }, lines);
 * ctx.at = { serverName: "app" };
 * ctx.log({ level: "error", message: "m" });
 * strictEqual((written[0] as { server: string }).server, "app");
 * ```
 */
export class RequestContext implements EngineRequest {
  /**
   * The request's clock in ms, read once when it arrived, for every use
   * that needs no finer time (the connection's last request, the shared
   * `stat` of a file, `expires`) while the handler has not waited; the
   * handler clears it once its first part is done, so a use after a wait
   * (an access phase, an upstream, a folder settling) reads the clock.
   */
  now: number | undefined;
  /** The client's address. */
  readonly client: string;
  /** The client's port. */
  readonly clientPort: number;
  /** The `Host` field, or `null` (what error lines show as `host:`). */
  readonly hostField: string | null;
  /** The authority for the engine: an absolute-form line's, else `Host`. */
  host: string | null = null;
  /** An absolute-form request line's authority, else `null`. */
  readonly authority: string | null;
  /** The `Referer` field, or `null`. */
  readonly referrer: string | null;
  /** The request target as received. */
  readonly target: string;
  /** `$uri`, once decoded. */
  uri = "";
  /** `$args`, once decoded. */
  args = "";
  /** The request came over HTTP/2. */
  readonly http2: boolean;
  /** Served over HTTP/2 on a TLS socket (its stream is one of several). */
  readonly served2: boolean;
  /** The request line as logged. */
  readonly request: string;
  /** nginx's verdict on the request line (method token, length). */
  readonly line: LineVerdict;
  /** The declared body length, or `null`. */
  contentLength: number | null = null;
  /** The declared length's digits. */
  lengthDigits: string | null = null;
  /** See `EngineRequest.bodyReceived`. */
  bodyReceived = 0;
  /**
   * The client's fields as the head's check walked them (flat: name,
   * value…), for the proxy; `null` before the check.
   */
  clientFields: readonly string[] | null = null;
  /** `Deno.serve` sent `100 Continue`: the body was read for forwarding. */
  continued = false;
  /** See `EngineRequest.closing`: an error page answered a closing status. */
  closing = false;
  /**
   * `false` when refused at its request line: nginx had read none of its
   * fields, and its access line shows none.
   */
  fieldsRead = true;
  /** The upstream tries for the access line, when its format may read them. */
  tries: UpstreamTries | null = null;
  /** The answering location's access logs; `null`: the default one. */
  accessLogs: EngineRequest["accessLogs"] = null;
  /** The variables its access line reads; `null` before the engine has them. */
  vars: EngineRequest["vars"] = null;
  /** The context of the request's error lines. */
  readonly lines: ErrorLines;
  /** The requests its connection has carried, this one included. */
  connectionRequests = 1;
  readonly #info: Deno.ServeHandlerInfo<Deno.NetAddr>;
  readonly #req: Request;
  #fields: FieldsRead | null;
  #log: ((event: RequestEvent) => void) | null = null;
  #length: Exclude<ContentLength, { kind: "invalid" }> | null = null;

  /** nginx's `$connection`: its connection's number (`*N`). */
  get connection(): number {
    return this.lines.connection;
  }

  /**
   * @param fields What the handler read of the request.
   * @param lines The context of its error lines.
   */
  constructor(fields: RequestFields, lines: ErrorLines) {
    this.#info = fields.info;
    this.#req = fields.req;
    this.now = fields.now ?? Date.now();
    this.#fields = fields.fields ?? null;
    this.client = fields.client;
    this.clientPort = fields.clientPort;
    this.hostField = fields.host;
    this.referrer = fields.referrer;
    this.target = fields.target;
    this.authority = fields.authority;
    this.http2 = fields.http2;
    this.served2 = fields.served2;
    this.request = fields.request;
    this.line = fields.line;
    this.lines = lines;
  }

  /** The request's fields as one walk read them (`readFields`). */
  get fields(): FieldsRead {
    return this.#fields ??= readFields(this.#req.headers);
  }

  /**
   * Keeps the one parse of `Content-Length` (the checks' verdict).
   *
   * @param length The declared length, or none.
   */
  declareLength(length: Exclude<ContentLength, { kind: "invalid" }>): void {
    this.#length = length;
    if (length.kind === "length") {
      this.contentLength = length.length;
      this.lengthDigits = length.digits;
    }
  }

  /**
   * A GET or HEAD that declared a body: told when a location forwards it
   * (the one reader), as the test reads `Transfer-Encoding` again.
   */
  get bodyInGet(): boolean {
    return this.#length !== null &&
      hasUnforwardableBody(this.#req, this.#length);
  }

  /** Whose error logs take the request's lines (see {@linkcode LogScope}). */
  get at(): LogScope {
    return this.lines.at;
  }

  set at(scope: LogScope) {
    this.lines.at = scope;
  }

  /** Writes an error line with the request's context. */
  get log(): (event: RequestEvent) => void {
    return this.#log ??= lineWriter(this.lines);
  }

  /**
   * Settles when the exchange is over: read only when needed, as reading
   * `Deno.ServeHandlerInfo.completed` makes a promise, and then before
   * anything waits (`Deno.serve` settles it only if asked for before the
   * exchange ended).
   */
  get completed(): Promise<void> {
    return this.#info.completed;
  }

  /**
   * Writes a line about the request line: no header fields, as nginx's.
   *
   * @param event The line's own fields.
   */
  logRequestLine(event: CheckEvent): void {
    this.lines.write(event, false);
  }
}
