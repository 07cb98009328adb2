/**
 * The gateway's own error responses, shaped like nginx's built-in pages
 * (`ngx_http_special_response.c`: CRLF line ends, `text/html`), for every
 * handler: the request checks, static files, the proxy and `return`; an
 * `error_page` may replace them (`request/request_flow.ts`). Two differences are
 * kept on purpose (the README's **error-page**): the footer names the
 * gateway, and no `msie_padding` comment is appended (nginx pads its pages
 * so that old Internet Explorer shows them instead of its own).
 *
 * @module
 */

import { makeResponse } from "./make_response.ts";

/**
 * Reason phrases as nginx's pages spell them (note "Gateway Time-out"; the
 * 302 page says "Found" where nginx's status line says "Moved Temporarily").
 */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Authorization Required",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Not Allowed",
  406: "Not Acceptable",
  408: "Request Time-out",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Request Entity Too Large",
  414: "Request-URI Too Large",
  415: "Unsupported Media Type",
  416: "Requested Range Not Satisfiable",
  421: "Misdirected Request",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  499: "Client Closed Request",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Temporarily Unavailable",
  504: "Gateway Time-out",
  505: "HTTP Version Not Supported",
  507: "Insufficient Storage",
} as const;

/** The footer name, where nginx prints `nginx/<version>`. */
const SERVER_TOKEN = "station-gateway";

/**
 * The nginx-shaped HTML body for a status.
 *
 * @param status The status.
 * @returns The page, CRLF line ends.
 *
 * @example Usage
 * ```ts
 * import { errorPageBody } from "./error_response.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(
 *   errorPageBody(502),
 *   "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
 *     "<center><h1>502 Bad Gateway</h1></center>\r\n" +
 *     "<hr><center>station-gateway</center>\r\n</body>\r\n</html>\r\n",
 * );
 * ```
 */
export function errorPageBody(status: number): string {
  if (status === HEADER_TOO_LARGE) {
    // nginx's 494 page (ngx_http_error_494_page), sent with status 400.
    return "<html>\r\n<head><title>400 Request Header Or Cookie Too Large" +
      "</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>" +
      "\r\n<center>Request Header Or Cookie Too Large</center>\r\n" +
      `<hr><center>${SERVER_TOKEN}</center>\r\n</body>\r\n</html>\r\n`;
  }
  const title = `${status} ${STATUS_TEXT[status] ?? "Error"}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n` +
    `<center><h1>${title}</h1></center>\r\n` +
    `<hr><center>${SERVER_TOKEN}</center>\r\n</body>\r\n</html>\r\n`;
}

/**
 * nginx's own status for a request head over `large_client_header_buffers`
 * (`NGX_HTTP_REQUEST_HEADER_TOO_LARGE`): its page, with status 400 on the
 * wire.
 */
export const HEADER_TOO_LARGE = 494;

/** Options for {@linkcode errorResponse}. */
export interface ErrorResponseOptions {
  /** Extra headers, e.g. `Allow` or `Location`. */
  headers?: HeadersInit;
  /** Answer a HEAD request: same headers, no body. */
  head?: boolean;
}

/**
 * An nginx-shaped error response.
 *
 * @param status The status.
 * @param options Extra headers, HEAD handling.
 * @returns The response.
 *
 * @example Usage
 * ```ts
 * import { errorResponse } from "./error_response.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const res = errorResponse(504);
 * strictEqual(res.statusText, "Gateway Time-out");
 * await res.body?.cancel();
 * ```
 */
export function errorResponse(
  status: number,
  options: ErrorResponseOptions = {},
): Response {
  if (status === 204 || status === 304) {
    // ngx_http_special_response_handler sends no page for these (a
    // `try_files … =204`): a head without a body, and no error_page.
    return makeResponse(null, {
      status,
      headers: new Headers(options.headers),
    });
  }
  const body = errorPageBody(status);
  const headers = new Headers(options.headers);
  headers.set("content-type", "text/html");
  headers.set("content-length", String(body.length));
  const wire = status === HEADER_TOO_LARGE ? 400 : status;
  const response = makeResponse(options.head ? null : body, {
    status: wire,
    statusText: STATUS_TEXT[wire] ?? "",
    headers,
  });
  builtIn.add(response);
  return response;
}

/** Responses made by {@linkcode errorResponse}; a WeakSet lets them go. */
const builtIn = new WeakSet<Response>();

/**
 * Whether the gateway made this response itself with
 * {@linkcode errorResponse}: only those get an `error_page`, as nginx
 * replaces its own special responses but passes an upstream's error through
 * (`proxy_intercept_errors off`).
 *
 * @param response A response.
 * @returns Whether it is a built-in error page.
 */
export function isBuiltInError(response: Response): boolean {
  return builtIn.has(response);
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
 * import { isUnread, unreadResponse } from "./error_response.ts";
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

/**
 * Whether a response was made by {@linkcode unreadResponse}.
 *
 * @param response A response.
 * @returns Whether nobody reads it.
 */
export function isUnread(response: Response): boolean {
  return unread.has(response);
}
