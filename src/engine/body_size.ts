/**
 * `client_max_body_size` where the phases find a location
 * (ngx_http_core_find_config_phase): the request's declared body against
 * the location's limit, refused and discarded in one step.
 *
 * @module
 */

import type { LocationConf } from "./model.ts";
import type { Content } from "./phases.ts";

/**
 * The body a request declared (nginx's `headers_in.content_length_n`), as
 * the find-config phase checks it against each location it finds: the
 * request itself, whose length the phases set to 0 once they refuse it
 * (the body is discarded, nginx's `r->discard_body`).
 */
export interface DeclaredBody {
  /**
   * The declared length; `null` without `Content-Length` (chunked, none)
   * until such a body is read whole: then what was received.
   */
  contentLength: number | null;
  /** Its digits as sent (a length past 2^53 - 1 is rounded). */
  readonly lengthDigits: string | null;
}

/**
 * ngx_http_core_find_config_phase: a declared body past the location's
 * `client_max_body_size` is refused once the location is found, before
 * its rewrite, preaccess and access phases (so a `return`, a `rewrite …
 * last`, `limit_req` or `auth_basic` never see it), and discarded: no
 * location found after it checks again, and an error page is asked
 * without it. A chunked body has no length here until it is read (the
 * proxy counts it as it reads, ngx_http_request_body_chunked_filter);
 * once read, its size is the request's length, which the locations an
 * internal redirect finds check as a declared one. The body is left
 * unread: Deno.serve closes the connection after the answer.
 *
 * @param conf The location found.
 * @param body The request's declared body (absent: none).
 * @returns The 413 and its line, or `null` when the body may come.
 *
 * @example Usage
 * ```ts
 * import { tooLarge } from "./body_size.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = { clientMaxBodySize: 10 } as Parameters<typeof tooLarge>[0];
 * const body = { contentLength: 20, lengthDigits: "020" };
 * strictEqual(tooLarge(conf, body)?.kind, "status");
 * strictEqual(body.contentLength, 0);
 * strictEqual(tooLarge(conf, body), null);
 * ```
 */
export function tooLarge(
  conf: LocationConf,
  body: DeclaredBody | undefined,
): Content | null {
  const max = conf.clientMaxBodySize;
  const length = body?.contentLength ?? null;
  if (max === 0 || length === null || length <= max) return null;
  body!.contentLength = 0;
  // `%O` of the length: its digits without the zeros a client put first.
  const digits = body!.lengthDigits!.replace(LEADING_ZEROS, "");
  return {
    kind: "status",
    conf,
    code: 413,
    message: `client intended to send too large body: ${digits} bytes`,
  };
}

const LEADING_ZEROS = /^0+(?=[0-9])/;
