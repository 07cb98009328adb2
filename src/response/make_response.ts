/**
 * The one way the gateway makes a `Response`: every answer it hands to
 * `Deno.serve` (its own pages, a proxied or FastCGI reply, a static file,
 * a filter's rewrite of another answer) is made here, so a status that
 * carries no content never meets `Response`'s refusal.
 *
 * `new Response(body, { status })` throws `TypeError: Response with null
 * body status cannot have body` for 204, 205 and 304 with any body, even
 * an empty one (Fetch's null body statuses; RFC 9110 §15.3.5, §15.3.6,
 * §15.4.5: none of them has content). nginx makes these statuses from
 * sources that carry a body (`return 304`, `error_page 404 =204 /page.html`,
 * an upstream's 204 with a body) and sends none: its header filter
 * (ngx_http_header_filter) makes a 204 and a 304 header-only. Here the body
 * is dropped instead (a stream is cancelled, so its source is released),
 * and with it the fields that described it: a 204 loses its length, type
 * and `Last-Modified` as in ngx_http_header_filter; a 205 and a 304 their
 * length (`Deno.serve` writes none for them: a length left on the answer
 * would be counted in `$body_bytes_sent`).
 *
 * A 205 is where this differs from nginx, which sends the body it was
 * given (`return 205 "text"`, an upstream's 205 body): the runtime cannot,
 * so the head goes alone (README, **reset-content-body**).
 *
 * @module
 */

/**
 * Whether a status never carries content: 204, 205 and 304 (RFC 9110;
 * Fetch's null body statuses, which `Response` refuses a body for).
 *
 * @param status The status.
 * @returns Whether a response of this status has no body.
 *
 * @example Usage
 * ```ts
 * import { isNullBodyStatus } from "./make_response.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isNullBodyStatus(205), true);
 * strictEqual(isNullBodyStatus(200), false);
 * ```
 */
export function isNullBodyStatus(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}

/**
 * Makes a response; for a null body status (204, 205, 304) the body is
 * dropped and the fields that described it go with it. Any other status is
 * `new Response(body, init)` as it is: the common answers (a 200 file, a
 * proxied 200) pay one comparison of their status.
 *
 * @param body The body, or `null`.
 * @param init Status, reason and fields (a `Response` too: its own are
 * taken).
 * @returns The response.
 *
 * @example Usage
 * ```ts
 * import { makeResponse } from "./make_response.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const res = makeResponse("the page\n", {
 *   status: 204,
 *   headers: { "content-type": "text/html", "content-length": "9" },
 * });
 * strictEqual(res.body, null);
 * strictEqual(res.headers.has("content-type"), false);
 * strictEqual(res.headers.has("content-length"), false);
 * ```
 */
export function makeResponse(
  body: BodyInit | null,
  init?: ResponseInit,
): Response {
  const status = init?.status;
  if (status === 204 || status === 205 || status === 304) {
    return bodiless(body, status, init!);
  }
  return new Response(body, init);
}

/** A null body status's response: no body, no fields about one. */
function bodiless(
  body: BodyInit | null,
  status: 204 | 205 | 304,
  init: ResponseInit,
): Response {
  if (body instanceof ReadableStream) body.cancel().catch(() => {});
  const headers = new Headers(init.headers);
  headers.delete("content-length");
  if (status === 204) {
    headers.delete("content-type");
    headers.delete("last-modified");
  }
  return new Response(null, {
    status,
    ...(init.statusText === undefined ? {} : { statusText: init.statusText }),
    headers,
  });
}
