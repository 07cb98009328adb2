/**
 * The gateway's own error responses, shaped like nginx's built-in pages
 * (`ngx_http_special_response.c`: CRLF line ends, `text/html`).
 *
 * @module
 */

/** Reason phrases as nginx spells them (note "Gateway Time-out"). */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  301: "Moved Permanently",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  405: "Not Allowed",
  408: "Request Time-out",
  413: "Request Entity Too Large",
  414: "Request-URI Too Large",
  416: "Requested Range Not Satisfiable",
  431: "Request Header Fields Too Large",
  499: "Client Closed Request",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Temporarily Unavailable",
  504: "Gateway Time-out",
} as const;

/** The footer name, where nginx prints `nginx/<version>`. */
export const SERVER_TOKEN = "station-gateway";

/**
 * The nginx-shaped HTML body for a status.
 *
 * @param status The status.
 * @returns The page, CRLF line ends.
 *
 * @example Usage
 * ```ts
 * import { errorPageBody } from "./error_pages.ts";
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
  const title = `${status} ${STATUS_TEXT[status] ?? "Error"}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n` +
    `<center><h1>${title}</h1></center>\r\n` +
    `<hr><center>${SERVER_TOKEN}</center>\r\n</body>\r\n</html>\r\n`;
}

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
 * import { errorResponse } from "./error_pages.ts";
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
  const body = errorPageBody(status);
  const headers = new Headers(options.headers);
  headers.set("content-type", "text/html");
  headers.set("content-length", String(body.length));
  return new Response(options.head ? null : body, {
    status,
    statusText: STATUS_TEXT[status] ?? "",
    headers,
  });
}
