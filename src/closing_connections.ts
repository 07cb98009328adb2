/**
 * Connections the gateway told `Connection: close`, so that nothing behind
 * that response is ever served.
 *
 * nginx closes a connection after a response that drops keep-alive (its own
 * 400, 413, 414, 500 …: `ngx_http_special_response_handler`), so a request
 * pipelined behind a malformed one is never read. `Deno.serve` keeps the
 * connection open whatever the response says (denoland/deno#9411: its HTTP/1
 * loop decides keep-alive from the request alone) and hands the next request
 * to the handler: a request smuggled behind a 400 would be forwarded. A
 * handler can end the connection only by failing a response body stream
 * (Deno then tears the connection down), so:
 *
 * - the answer that ends the connection ({@linkcode endsConnection}: the
 *   gateway's own page for one of nginx's statuses, or a refusal that says
 *   `close`) goes out saying `close` once ({@linkcode sayClose}), and its
 *   connection is remembered ({@linkcode ClosingConnections.mark});
 * - a later request on that connection is answered by
 *   {@linkcode cutConnection}: a 400 head, then the connection ends. It is
 *   not logged or forwarded (nginx would never have read it).
 *
 * While a connection is open its peer address, peer port and local port
 * identify it. The table is bounded in count, and entries end when the
 * connection is cut or after `ttlMs` (nginx's `keepalive_timeout`, 75 s: a
 * client that honours the close never comes back, and one that sends again
 * that much later is not pipelining behind the 400). When the table is full
 * of live entries nothing is evicted (a flood cannot push another
 * connection's entry out): the response itself is cut after its last byte
 * ({@linkcode cutAfter}), which closes the connection at once.
 *
 * @module
 */

import {
  errorStatus,
  isBuiltInError,
  makeResponse,
  STATUS_TEXT,
} from "./response/mod.ts";
import { listHas } from "./routing/mod.ts";

/**
 * The statuses after which nginx 1.22 drops keep-alive when it answers with
 * its own page (`ngx_http_special_response_handler`: 400, 413, 414, 500,
 * 501, and 495-497, sent as 400; not 494, sent as 400 too).
 */
const CLOSING_STATUSES: ReadonlySet<number> = new Set([
  400,
  413,
  414,
  495,
  496,
  497,
  500,
  501,
]);

/**
 * Whether nginx drops keep-alive after its own answer of this status:
 * also when an `error_page` then answers it (the special response handler
 * runs before the page's redirect), whatever status the page goes out with.
 *
 * @param status The status the gateway made.
 * @returns Whether the connection ends after the request's answer.
 *
 * @example Usage
 * ```ts
 * import { dropsKeepalive } from "./closing_connections.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(dropsKeepalive(500), true);
 * strictEqual(dropsKeepalive(404), false);
 * ```
 */
export function dropsKeepalive(status: number): boolean {
  return CLOSING_STATUSES.has(status);
}

/**
 * Whether an answer ends its connection: the gateway's own page for one of
 * {@linkcode CLOSING_STATUSES} over HTTP/1.x (an HTTP/2 stream's page ends
 * only its stream: keep-alive is HTTP/1.x's), or an answer that says
 * `close` (a refusal before routing, TRACE's 405 among them).
 *
 * @param response The answer, status 400 or more.
 * @param http2 It answers an HTTP/2 stream.
 * @returns Whether nothing behind it on its connection may be served.
 *
 * @example Usage
 * ```ts
 * import { endsConnection } from "./closing_connections.ts";
 * import { errorResponse } from "./response/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(endsConnection(errorResponse(500), false), true);
 * strictEqual(endsConnection(errorResponse(500), true), false);
 * strictEqual(endsConnection(errorResponse(404), false), false);
 * strictEqual(endsConnection(new Response("up", { status: 500 }), false), false);
 * ```
 */
export function endsConnection(response: Response, http2: boolean): boolean {
  if (
    !http2 && isBuiltInError(response) &&
    CLOSING_STATUSES.has(errorStatus(response))
  ) {
    return true;
  }
  return response.headers.get("connection")?.toLowerCase().includes("close") ??
    false;
}

/**
 * Puts `Connection: close` on the gateway's own closing answer once (its
 * page, or the `error_page` that answered its status: only those fields
 * are the gateway's to change).
 * `Deno.serve` writes its own when the request said `close` or a body it
 * has not read yet is left unread, and does not look at the answer's: the
 * gateway's went out beside it. A small body it read with the head gets
 * none from either (Deno does not say which): the connection still ends,
 * as below.
 *
 * @param req The request.
 * @param response Its closing answer.
 */
export function sayClose(req: Request, response: Response): void {
  const headers = response.headers;
  if (listHas(req.headers.get("connection"), "close")) {
    headers.delete("connection");
  } else if (
    !headers.has("connection") && (req.body === null || req.bodyUsed)
  ) {
    headers.set("connection", "close");
  }
}

/** Options for {@linkcode ClosingConnections}. */
export interface ClosingConnectionsOptions {
  /** @default {4096} */
  maxEntries?: number;
  /** @default {75_000} */
  ttlMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/**
 * The error a cut response body fails with; `Deno.serve`'s `onError` sees it
 * and must stay quiet: the cut is the gateway's own doing.
 */
export class ConnectionCut extends Error {
  /** Creates the error. */
  constructor() {
    super("Connection closed after a response that said close");
    this.name = "ConnectionCut";
  }
}

/**
 * The identity of a client connection while it is open.
 *
 * @param peer The client's address and port.
 * @param localPort The listening port the connection came in on.
 * @returns A key for {@linkcode ClosingConnections}.
 *
 * @example Usage
 * ```ts
 * import { connectionKey } from "./closing_connections.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(
 *   connectionKey({ hostname: "::1", port: 50000 }, 80),
 *   "::1|50000|80",
 * );
 * ```
 */
export function connectionKey(
  peer: { hostname: string; port: number },
  localPort: number,
): string {
  return `${peer.hostname}|${peer.port}|${localPort}`;
}

/** Connections that must serve no further request. */
export class ClosingConnections {
  #entries = new Map<string, number>();
  #maxEntries: number;
  #ttlMs: number;
  #now: () => number;

  /**
   * Creates an empty table.
   *
   * @param options Its bound, entry lifetime and clock.
   */
  constructor(options: ClosingConnectionsOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 4096;
    this.#ttlMs = options.ttlMs ?? 75_000;
    this.#now = options.now ?? Date.now;
  }

  /** How many connections are remembered. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Remembers a connection that was told `close`.
   *
   * @param key The connection ({@linkcode connectionKey}).
   * @param force Make room by forgetting the oldest entry when full (for a
   * response that cannot be cut: one without a body).
   * @returns `false` when the table is full of live entries and nothing was
   * remembered: the caller must close the connection another way.
   *
   * @example Usage
   * ```ts
   * import { ClosingConnections } from "./closing_connections.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const closing = new ClosingConnections({ maxEntries: 1 });
   * strictEqual(closing.mark("a"), true);
   * strictEqual(closing.mark("b"), false);
   * strictEqual(closing.has("a"), true);
   * strictEqual(closing.mark("b", true), true);
   * strictEqual(closing.has("a"), false);
   * ```
   */
  mark(key: string, force = false): boolean {
    const now = this.#now();
    this.#entries.delete(key);
    this.#expire(now);
    if (this.#entries.size >= this.#maxEntries) {
      if (!force) return false;
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, now);
    return true;
  }

  /**
   * Whether a connection was told `close` and is still remembered.
   *
   * @param key The connection ({@linkcode connectionKey}).
   * @returns Whether a request on it must not be served.
   */
  has(key: string): boolean {
    const at = this.#entries.get(key);
    if (at === undefined) return false;
    if (this.#now() - at < this.#ttlMs) return true;
    this.#entries.delete(key);
    return false;
  }

  /**
   * Forgets a connection (it is being cut).
   *
   * @param key The connection ({@linkcode connectionKey}).
   */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  #expire(now: number): void {
    // Insertion order is marking order: the walk stops at the first live one.
    for (const [key, at] of this.#entries) {
      if (now - at < this.#ttlMs) break;
      this.#entries.delete(key);
    }
  }
}

/**
 * The answer to a request on a connection that was told `close`: a 400 head
 * whose body fails at once, so `Deno.serve` ends the connection. A HEAD
 * answer has no body to fail: Deno keeps that connection, and the caller
 * keeps remembering it. The same head-then-close stands for nginx's close
 * without an answer (`return 444`), with that status.
 *
 * @param head The request is a HEAD.
 * @param status The head's status.
 * @returns The response.
 */
export function cutConnection(head: boolean, status = 400): Response {
  const body = head ? null : new ReadableStream<Uint8Array>({
    start(controller) {
      controller.error(new ConnectionCut());
    },
  });
  return makeResponse(body, {
    status,
    statusText: STATUS_TEXT[status] ?? "",
    headers: { connection: "close" },
  });
}

/**
 * The same response, its body sent in full and then failed, so `Deno.serve`
 * ends the connection right after it. Without `Content-Length` (Deno would
 * end the body at that length and keep the connection) it goes out chunked,
 * with no last chunk: the close ends it.
 *
 * @param response A response with a body.
 * @returns The cut response.
 */
export function cutAfter(response: Response): Response {
  const source = response.body;
  if (source === null) return response;
  const reader = source.getReader();
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return makeResponse(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await reader.read().catch(() => null);
        if (next !== null && !next.done) {
          controller.enqueue(next.value);
          return;
        }
        controller.error(new ConnectionCut());
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    }),
    { status: response.status, statusText: response.statusText, headers },
  );
}
