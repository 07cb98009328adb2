/**
 * A cached file's whole answer made once and cloned for each request.
 *
 * `new Response(body, { headers })` over bytes in memory costs `Deno.serve`
 * more than the rest of a cached file's answer: the field list is converted
 * and checked name by name (`fillHeaderList()` in `ext/fetch/20_headers.js`,
 * Deno 2.9.6), then a native response is prepared from it in Rust and
 * registered with a `FinalizationRegistry` (`setServeNativeFromHeaders()` in
 * `ext/fetch/23_response.js`). `Response.clone()` copies the checked list and
 * shares the body's bytes; a clone has no native response, so `Deno.serve`
 * hands its bytes and fields to one op when it sends it (ext/http/00_serve.ts
 * `fastSyncResponseOrStream`). In the runtime's floor serving a 2 KB page
 * over TLS with the gateway's six fields, that cut a fifth of the CPU per
 * request (scripts/README.md). The framing `Transfer-Encoding: chunked` asks
 * for (`response/tls_one_write.ts`) is the same: head and body in one write.
 *
 * The template is kept on the cache entry, so it lives and dies with the
 * cached bytes (one per file, the memory bound of `static/cache.ts`), and is
 * reused only for the very same status and fields: a field that changes (an
 * `expires` date, another location's type) makes a new one.
 *
 * @module
 */

import { type CachedBody, wholeFileResponse } from "./cached_body.ts";

/** A cached file's answer, kept to be cloned. */
export interface AnswerTemplate {
  /** The status it was made with. */
  status: number;
  /** The fields it was made from; never changed afterwards. */
  fields: readonly (readonly [string, string])[];
  /** The answer itself, never sent: only its clones are. */
  response: Response;
  /** What its fields were made from, when a plan said (`FieldsShape`). */
  shape: FieldsShape | null;
}

/**
 * What the fields of a whole file's 200 are made from when nothing else
 * adds to them (no header filter, no `gzip_static`, no range): with the
 * cached file's validators and length, these decide every field. A plan
 * that knows its answer's shape asks for the template by it, before it
 * builds the fields ({@linkcode templatedByShape}).
 */
export interface FieldsShape {
  /** `Content-Type`. */
  readonly contentType: string;
  /** `etag on`. */
  readonly etag: boolean;
  /** `Accept-Ranges: bytes` is sent. */
  readonly ranges: boolean;
  /** Framed to be written in one piece (`response/tls_one_write.ts`). */
  readonly framed: boolean;
}

/**
 * A clone of the file's template when it was made for a 200 of this
 * shape, else `null` (then the plan builds the fields and asks
 * {@linkcode templatedFileResponse}): a request for the same file as the
 * last one builds no field list and compares none.
 *
 * @param body The cached file.
 * @param shape What the answer's fields are made from.
 * @returns The answer, or `null`.
 */
export function templatedByShape(
  body: CachedBody,
  shape: FieldsShape,
): Response | null {
  const kept = body.template;
  const made = kept?.shape;
  if (
    made === undefined || made === null || kept!.status !== 200 ||
    made.contentType !== shape.contentType || made.etag !== shape.etag ||
    made.ranges !== shape.ranges || made.framed !== shape.framed
  ) {
    return null;
  }
  return kept!.response.clone();
}

/**
 * The answer carrying a cached file whole, cloned from the file's template
 * when it was made with the same status and fields, else from a new template
 * kept for the next request.
 *
 * Should a runtime read the body's stream instead of taking its bytes, a
 * clone would tee the stream: the stream is then given up (as
 * `wholeFileResponse` does) and no template kept.
 *
 * @param body The cached file.
 * @param status The answer's status.
 * @param fields Its fields; not to be changed afterwards.
 * @param shape What they were made from, when that decides them all.
 * @returns A response of its own (its fields can change without touching
 * the template's).
 *
 * @example Usage
 * ```ts
 * import { StaticCache } from "./cache.ts";
 * import { templatedFileResponse } from "./answer_template.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.js`, "let a = 1;");
 * using file = Deno.openSync(`${dir}/a.js`);
 * const cached = new StaticCache().load(`${dir}/a.js`, file, file.statSync(), dir)!;
 * const fields: [string, string][] = [["content-type", "text/javascript"]];
 * const one = templatedFileResponse(cached, 200, fields);
 * const two = templatedFileResponse(cached, 200, [...fields]);
 * strictEqual(await one.text(), "let a = 1;");
 * strictEqual(await two.text(), "let a = 1;");
 * strictEqual(cached.template?.fields, fields);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function templatedFileResponse(
  body: CachedBody,
  status: number,
  fields: [string, string][],
  shape: FieldsShape | null = null,
): Response {
  const kept = body.template;
  if (
    kept !== null && kept.status === status && sameFields(kept.fields, fields)
  ) {
    // The same fields: the shape they were made from too, when known.
    if (shape !== null && kept.shape === null) kept.shape = shape;
    return kept.response.clone();
  }
  const template = wholeFileResponse(body, { status, headers: fields });
  const response = template.clone();
  if (body.stream !== null && body.stream.locked) {
    body.stream = null;
    body.template = null;
    return response;
  }
  // A file read while it changed is served once, not kept.
  body.template = body.validators === null
    ? null
    : { status, fields, response: template, shape };
  return response;
}

/** The same names and values in the same order. */
function sameFields(
  a: readonly (readonly [string, string])[],
  b: readonly (readonly [string, string])[],
): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x[0] !== y[0] || x[1] !== y[1]) return false;
  }
  return true;
}
