/**
 * Which failures move a request to the next server of its group, as
 * nginx's `ngx_http_upstream_next` decides under the default
 * `proxy_next_upstream error timeout`.
 *
 * @module
 */

import type { UpstreamError } from "./error.ts";

/**
 * Whether nginx's default `proxy_next_upstream error timeout` sends a failed
 * request to the next server: only for errors and timeouts, only if the
 * request was never sent or is idempotent (nginx ≥ 1.9.13 does not resend a
 * POST, LOCK or PATCH), and never once the client has been answered (the
 * caller only asks before that).
 *
 * @param error The failure.
 * @param method The request method.
 * @returns Whether to try the next server.
 *
 * @example Usage
 * ```ts
 * import { shouldTryNext } from "./try_next.ts";
 * import { upstreamErrorFromOs, upstreamTimeout } from "./error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const refused = upstreamErrorFromOs(new Error("(os error 111)"), "connecting to upstream", "linux");
 * strictEqual(shouldTryNext(refused, "POST"), true);
 * strictEqual(shouldTryNext(upstreamTimeout("reading response header from upstream", "linux"), "POST"), false);
 * ```
 */
export function shouldTryNext(error: UpstreamError, method: string): boolean {
  if (error.kind === "client-closed" || error.kind === "invalid-response") {
    return false;
  }
  if (error.action === "connecting to upstream") return true;
  return !["POST", "LOCK", "PATCH"].includes(method);
}
