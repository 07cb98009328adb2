/**
 * What the head's framing says of the body to come, once the head is
 * checked (`request_checks.ts`): a body `Deno.serve` would not hand over,
 * and whether reading the body answers `100 Continue` first.
 *
 * @module
 */

import type { ContentLength } from "./content_length.ts";
import type { FieldsRead } from "./read_fields.ts";

/**
 * Whether a request carries a body `Deno.serve` will not hand over: a GET
 * or HEAD with a length or chunked framing (`InnerRequest.body` is `null`
 * for those methods), so forwarding it would drop the body.
 *
 * @param req The request.
 * @param contentLength Its parsed `Content-Length`.
 * @returns Whether to refuse it.
 *
 * @example Usage
 * ```ts
 * import { hasUnforwardableBody } from "./request_body_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const req = new Request("http://h/x", { headers: { "content-length": "3" } });
 * strictEqual(hasUnforwardableBody(req, { kind: "length", length: 3, digits: "3" }), true);
 * ```
 */
export function hasUnforwardableBody(
  req: Request,
  contentLength: Exclude<ContentLength, { kind: "invalid" }>,
): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  return (contentLength.kind === "length" && contentLength.length > 0) ||
    req.headers.has("transfer-encoding");
}

/**
 * Whether `Deno.serve` answers this request `100 Continue` once its body is
 * read: `Expect: 100-continue` and a body that is not empty (it sends none
 * for an empty one, where nginx's `ngx_http_test_expect` still does).
 *
 * @param fields The request's fields as the handler's walk read them (a
 * `Headers.get` here was a second scan of the fields per proxied request).
 * @param length Its declared `Content-Length`, or `null`.
 * @returns Whether reading the body sends the interim answer.
 *
 * @example Usage
 * ```ts
 * import { expectsContinue } from "./request_body_checks.ts";
 * import { readFields } from "./read_fields.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const fields = readFields(new Headers({ expect: "100-Continue" }));
 * strictEqual(expectsContinue(fields, 2), true);
 * strictEqual(expectsContinue(fields, 0), false);
 * ```
 */
export function expectsContinue(
  fields: Pick<FieldsRead, "expect" | "transferEncoding">,
  length: number | null,
): boolean {
  const expect = fields.expect;
  if (expect === null || expect.toLowerCase() !== "100-continue") return false;
  return length === null ? fields.transferEncoding !== null : length > 0;
}
