/**
 * Answers nobody reads: the one to a client that already left, and the one
 * that stands for nginx's close without an answer (`return 444`,
 * `try_files … =408`, `limit_req_status 499`: ngx_http_finalize_request
 * terminates such a request). Neither is a built-in page, so no
 * `error_page` runs for them, and the access line counts neither head nor
 * body; the gateway closes the connection of an unanswered one
 * (closing_connections.ts).
 *
 * @module
 */

import { makeResponse } from "./make_response.ts";

/**
 * The statuses with which nginx ends a request without any answer
 * (ngx_http_finalize_request: `NGX_HTTP_REQUEST_TIME_OUT` and
 * `NGX_HTTP_CLIENT_CLOSED_REQUEST` terminate it, `NGX_HTTP_CLOSE` (444)
 * too): `return`, `try_files =code`, `limit_req_status`,
 * `limit_conn_status` with one of them close the connection, and the
 * access line logs the status with no bytes.
 */
const CLOSING: ReadonlySet<number> = new Set([408, 444, 499]);

/**
 * Whether nginx closes the connection without an answer when a request
 * ends with this status.
 *
 * @param status The status the phases decided.
 * @returns Whether it is 408, 444 or 499.
 *
 * @example Usage
 * ```ts
 * import { closesUnanswered } from "./unanswered.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(closesUnanswered(444), true);
 * strictEqual(closesUnanswered(404), false);
 * ```
 */
export function closesUnanswered(status: number): boolean {
  return CLOSING.has(status);
}

/** Answers made for a client that already left (never read). */
const unread = new WeakSet<Response>();

/**
 * The answer to a client that left before its request was answered: nginx
 * sends nothing (it set `c->error`, ngx_http_finalize_request terminates
 * the request) and logs the status with no bytes. `Deno.serve` must be
 * given a response: this one has no body and is no built-in page, so no
 * `error_page` runs for it, and the access line counts no head
 * ({@linkcode isUnread}).
 *
 * @param status The status logged (400 for a body cut off).
 * @returns The response, marked.
 *
 * @example Usage
 * ```ts
 * import { isUnread, unreadResponse } from "./unanswered.ts";
 * import { ok } from "node:assert/strict";
 *
 * ok(isUnread(unreadResponse(400)));
 * ```
 */
export function unreadResponse(status: number): Response {
  const response = makeResponse(null, {
    status,
    headers: { connection: "close" },
  });
  unread.add(response);
  return response;
}

/** Answers to a request nginx ends without any answer (never read). */
const unanswered = new WeakSet<Response>();

/**
 * The answer to a request nginx would end without answering
 * ({@linkcode closesUnanswered}: `return 444`, `try_files … =408`, a
 * `limit_req_status 499`): an {@linkcode unreadResponse}, so no
 * `error_page` runs for it and the access line logs the status with no
 * bytes, marked for the gateway to close its connection
 * ({@linkcode isUnanswered}; closing_connections.ts).
 *
 * @param status 408, 444 or 499.
 * @returns The response, marked.
 *
 * @example Usage
 * ```ts
 * import { isUnanswered, isUnread, unansweredResponse } from "./unanswered.ts";
 * import { ok } from "node:assert/strict";
 *
 * const res = unansweredResponse(444);
 * ok(isUnanswered(res) && isUnread(res));
 * ```
 */
export function unansweredResponse(status: number): Response {
  const response = unreadResponse(status);
  unanswered.add(response);
  return response;
}

/**
 * Whether a response was made by {@linkcode unansweredResponse}.
 *
 * @param response A response.
 * @returns Whether its connection must close without an answer.
 */
export function isUnanswered(response: Response): boolean {
  return unanswered.has(response);
}

/**
 * Marks a response as one nobody reads ({@linkcode isUnread}): the cut
 * that stands for an unanswered request's close.
 *
 * @param response The response.
 * @returns The same response.
 */
export function markUnread(response: Response): Response {
  unread.add(response);
  return response;
}

/**
 * Whether a response was made by {@linkcode unreadResponse}.
 *
 * @param response A response.
 * @returns Whether nobody reads it.
 */
export function isUnread(response: Response): boolean {
  return unread.has(response);
}
