/**
 * The gateway's own error responses, shaped like nginx's built-in pages
 * (`ngx_http_special_response.c`: CRLF line ends, `text/html`), and the
 * `error_page` setting that replaces them with files from the client-app
 * folder (served by `static/error_page.ts`).
 *
 * @module
 */

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
  if (status === 204 || status === 304) {
    // ngx_http_special_response_handler sends no page for these (a
    // `try_files … =204`): a head without a body, and no error_page.
    return new Response(null, {
      status,
      headers: new Headers(options.headers),
    });
  }
  const body = errorPageBody(status);
  const headers = new Headers(options.headers);
  headers.set("content-type", "text/html");
  headers.set("content-length", String(body.length));
  const wire = status === HEADER_TOO_LARGE ? 400 : status;
  const response = new Response(options.head ? null : body, {
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

/** Status → page URI below the root (nginx `error_page CODE... URI`). */
export type ErrorPages = ReadonlyMap<number, string>;

/** The stock nginx.conf's `error_page 500 502 503 504 /50x.html;`. */
export const DEFAULT_ERROR_PAGE = "500 502 503 504 /50x.html";

/**
 * Parses `error-page` settings, each as nginx writes the directive: status
 * codes (400–599), then the page's path in the client-app folder; `off`
 * alone clears them. A later line wins for a code given twice.
 *
 * @param lines The settings, e.g. `["500 502 503 504 /50x.html"]`.
 * @returns The pages by status.
 * @throws {TypeError} On any other shape, naming the line.
 *
 * @example Usage
 * ```ts
 * import { parseErrorPages } from "./error_pages.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const pages = parseErrorPages(["500 502 503 504 /50x.html", "404 /404.html"]);
 * strictEqual(pages.get(502), "/50x.html");
 * strictEqual(pages.get(404), "/404.html");
 * strictEqual(parseErrorPages(["off"]).size, 0);
 * ```
 */
export function parseErrorPages(lines: readonly string[]): ErrorPages {
  const pages = new Map<number, string>();
  for (const line of lines) {
    const words = line.trim().split(/\s+/);
    if (words.length === 1 && words[0] === "off") continue;
    const uri = words.pop() ?? "";
    const codes = words.map(Number);
    const pathOk = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/.test(uri) &&
      !uri.startsWith("/api/") && !/\/\.|[. ]$/.test(uri);
    if (
      !pathOk || codes.length === 0 ||
      !codes.every((c) => Number.isInteger(c) && c >= 400 && c <= 599) ||
      !words.every((w) => /^\d{3}$/.test(w))
    ) {
      throw new TypeError(
        `Cannot parse error-page "${line}": expected status codes and a path, e.g. "${DEFAULT_ERROR_PAGE}", or off`,
      );
    }
    for (const code of codes) pages.set(code, uri);
  }
  return pages;
}
