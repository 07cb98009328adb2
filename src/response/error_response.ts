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
  // 498 (NGX_HTTP_CANCELED) has 404's page (ngx_http_error_pages).
  if (status === 498) status = 404;
  const special = SPECIAL_400[status];
  if (special !== undefined) {
    // nginx's 494-497 pages (ngx_http_error_494_page …), sent with 400.
    return `<html>\r\n<head><title>400 ${special}</title></head>\r\n` +
      "<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n" +
      `<center>${special}</center>\r\n` +
      `<hr><center>${SERVER_TOKEN}</center>\r\n</body>\r\n</html>\r\n`;
  }
  const title = `${status} ${STATUS_TEXT[status] ?? "Error"}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n` +
    `<center><h1>${title}</h1></center>\r\n` +
    `<hr><center>${SERVER_TOKEN}</center>\r\n</body>\r\n</html>\r\n`;
}

/**
 * nginx's own statuses it answers with a 400 and a page of their own
 * (ngx_http_special_response_handler sets `r->err_status` to 400 for them):
 * a head over `large_client_header_buffers` (494) and the TLS ones
 * (`return 495` too).
 */
const SPECIAL_400: Readonly<Record<number, string>> = {
  494: "Request Header Or Cookie Too Large",
  495: "The SSL certificate error",
  496: "No required SSL certificate was sent",
  497: "The plain HTTP request was sent to HTTPS port",
};

/**
 * Whether nginx 1.22 has a page for a status (`ngx_http_error_pages`); any
 * other it answers with an empty body, `Content-Length: 0` and no type
 * (ngx_http_send_special_response: 407, 417-420, 422-428, 430-493, 499,
 * 506, 508 and up, a 2xx). 498's page is 404's, sent with 498.
 */
function hasPage(status: number): boolean {
  return (status >= 301 && status <= 303) || status === 307 ||
    status === 308 || (status >= 400 && status <= 416 && status !== 407) ||
    status === 421 || status === 429 || (status >= 494 && status <= 498) ||
    (status >= 500 && status <= 505) || status === 507;
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
  if (!hasPage(status)) {
    // ngx_http_send_special_response: no page, an empty body (a 204 and a
    // 304 lose even the length: make_response.ts); error_page still
    // applies, but not to a 204 or a 304 (`try_files … =204`), which is
    // never an error.
    const headers = new Headers(options.headers);
    headers.set("content-length", "0");
    const response = makeResponse(null, {
      status,
      statusText: STATUS_TEXT[status] ?? "",
      headers,
    });
    if (status >= 300 && status !== 304) builtIn.add(response);
    return response;
  }
  const body = errorPageBody(status);
  const headers = new Headers(options.headers);
  headers.set("content-type", "text/html");
  headers.set("content-length", String(body.length));
  const wire = SPECIAL_400[status] === undefined ? status : 400;
  const response = makeResponse(options.head ? null : body, {
    status: wire,
    statusText: STATUS_TEXT[wire] ?? "",
    headers,
  });
  builtIn.add(response);
  if (wire !== status) special.set(response, status);
  return response;
}

/** Responses made by {@linkcode errorResponse}; a WeakSet lets them go. */
const builtIn = new WeakSet<Response>();
/** The 494-497 pages made, sent as 400, by the status they were made for. */
const special = new WeakMap<Response, number>();

/**
 * The status nginx's special response handler was given for an answer
 * (`r->err_status`): 494-497 for their pages, which go out as 400 and
 * find the `error_page` of their own code, not 400's; any other answer's
 * own status.
 *
 * @param response An answer.
 * @returns Its status as `error_page` looks it up.
 *
 * @example Usage
 * ```ts
 * import { errorResponse, errorStatus } from "./error_response.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const page = errorResponse(497);
 * strictEqual(page.status, 400);
 * strictEqual(errorStatus(page), 497);
 * await page.body?.cancel();
 * ```
 */
export function errorStatus(response: Response): number {
  const status = response.status;
  return status === 400 ? special.get(response) ?? status : status;
}

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
