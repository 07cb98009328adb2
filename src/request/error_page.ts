/**
 * The parts of nginx's `error_page` (ngx_http_send_error_page) that make
 * an answer without running the flow again: the redirect a URL page is,
 * and the copy of the request an internal page is asked with. The
 * internal redirect, and the status its answer goes out with, are the
 * flow's (`request_flow.ts`).
 *
 * @module
 */

import { errorResponse, redirectLocation } from "../response/mod.ts";
import { REDIRECTS } from "./content_answer.ts";
import { derivedRequest } from "../runtime/mod.ts";

/**
 * A page given as a URL: nginx answers 302 (or the `=code` given, when it
 * is a redirect code) with `Location`; auth_basic's challenge stays.
 *
 * @param uri The page's URL.
 * @param options The `=code`, whether the request is a HEAD, the origin
 * and the challenge to keep.
 * @returns The redirect.
 */
export function errorPageUrl(
  uri: string,
  options: {
    overwrite: number | null;
    head: boolean;
    origin: string;
    challenge: string | null;
  },
): Response {
  const { overwrite, head, origin, challenge } = options;
  const code = overwrite !== null && REDIRECTS.has(overwrite) ? overwrite : 302;
  return errorResponse(code, {
    head,
    headers: challenge === null
      ? { location: redirectLocation(uri, origin) }
      : {
        location: redirectLocation(uri, origin),
        "www-authenticate": challenge,
      },
  });
}

/**
 * The request an internal error page is asked with: the client's fields
 * as they are, so a proxied page's upstream gets its `Range` and
 * conditional fields as nginx sends them; a file page does not act on
 * them (`static_handler.ts`).
 *
 * @param req The request that failed.
 * @param method `GET`, or `HEAD` for a HEAD.
 * @returns The page's request.
 */
export function pageRequest(req: Request, method: string): Request {
  return derivedRequest(req.url, { method, headers: req.headers });
}
