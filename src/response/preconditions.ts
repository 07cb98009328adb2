/**
 * Conditional requests as nginx's not-modified filter answers them
 * (`ngx_http_not_modified_header_filter`), for every 200 a main request
 * gets from the gateway itself (a file, `return`, a listing, the counts
 * page; an upstream's answer never: `r->disable_not_modified` when nothing
 * is cached): `If-Unmodified-Since` and `If-Match` first (412), then
 * `If-Modified-Since` and `If-None-Match` together (304 only when every
 * one present passes). An answer without `Last-Modified` is modified
 * since any date and fails `If-Unmodified-Since`; one without `ETag`
 * matches only `*`.
 *
 * @module
 */

import { httpTimeMs } from "./http_time.ts";

/** The request's conditional fields (`null`: absent). */
export interface ConditionalFields {
  /** `If-None-Match`. */
  readonly ifNoneMatch: string | null;
  /** `If-Modified-Since`. */
  readonly ifModifiedSince: string | null;
  /** `If-Match`. */
  readonly ifMatch: string | null;
  /** `If-Unmodified-Since`. */
  readonly ifUnmodifiedSince: string | null;
}

/** The answer's validators. */
export interface AnswerValidators {
  /** Its `ETag` as sent, or `null`. */
  readonly etag: string | null;
  /** Its `Last-Modified`, in ms since the epoch (whole seconds), or `null`. */
  readonly lastModifiedMs: number | null;
}

/** No validators: an answer the gateway makes up (`return`, a listing). */
export const NO_VALIDATORS: AnswerValidators = Object.freeze({
  etag: null,
  lastModifiedMs: null,
});

/**
 * Whether the request asks anything of the answer's validators.
 *
 * @param asked The request's conditional fields.
 * @returns `true` when one of them is present.
 */
export function isConditional(asked: ConditionalFields): boolean {
  return asked.ifNoneMatch !== null || asked.ifModifiedSince !== null ||
    asked.ifMatch !== null || asked.ifUnmodifiedSince !== null;
}

/**
 * The status nginx's not-modified filter gives a 200 (`if_modified_since
 * exact`, nginx's default and the only form the gateway reads).
 *
 * @param asked The request's conditional fields.
 * @param answer The answer's validators.
 * @returns 200 (send it), 304 or 412.
 *
 * @example Usage
 * ```ts
 * import { NO_VALIDATORS, preconditionStatus } from "./preconditions.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const none = { ifNoneMatch: null, ifModifiedSince: null, ifMatch: null, ifUnmodifiedSince: null };
 * strictEqual(preconditionStatus({ ...none, ifNoneMatch: "*" }, NO_VALIDATORS), 304);
 * strictEqual(preconditionStatus({ ...none, ifMatch: '"a"' }, NO_VALIDATORS), 412);
 * strictEqual(preconditionStatus({ ...none, ifMatch: '"a"' }, { etag: '"a"', lastModifiedMs: null }), 200);
 * ```
 */
export function preconditionStatus(
  asked: ConditionalFields,
  answer: AnswerValidators,
): 200 | 304 | 412 {
  const lm = answer.lastModifiedMs;
  if (asked.ifUnmodifiedSince !== null) {
    // ngx_http_test_if_unmodified: no Last-Modified, or a date that is no
    // date (NGX_ERROR, -1), fails.
    const iums = httpTimeMs(asked.ifUnmodifiedSince);
    if (lm === null || iums === null || iums < lm) return 412;
  }
  if (asked.ifMatch !== null && !matches(asked.ifMatch, answer.etag, false)) {
    return 412;
  }
  if (asked.ifModifiedSince === null && asked.ifNoneMatch === null) return 200;
  // ngx_http_test_if_modified under `exact`: only the same second is not
  // modified.
  if (
    asked.ifModifiedSince !== null &&
    (lm === null || httpTimeMs(asked.ifModifiedSince) !== lm)
  ) {
    return 200;
  }
  if (
    asked.ifNoneMatch !== null && !matches(asked.ifNoneMatch, answer.etag, true)
  ) {
    return 200;
  }
  return 304;
}

/**
 * `ngx_http_test_if_match`: the whole value `*`, or an entity tag of the
 * list equal to the answer's (byte for byte; `W/` dropped on both sides
 * for `If-None-Match`'s weak comparison).
 */
function matches(list: string, etag: string | null, weak: boolean): boolean {
  if (list === "*") return true;
  if (etag === null) return false;
  let tag = etag;
  if (weak && tag.length > 2 && tag.startsWith("W/")) tag = tag.slice(2);
  let at = 0;
  const end = list.length;
  while (at < end) {
    if (weak && end - at > 2 && list.startsWith("W/", at)) at += 2;
    if (tag.length > end - at) return false;
    if (list.startsWith(tag, at)) {
      let after = at + tag.length;
      while (after < end && (list[after] === " " || list[after] === "\t")) {
        after++;
      }
      if (after === end || list[after] === ",") return true;
    }
    while (at < end && list[at] !== ",") at++;
    while (
      at < end && (list[at] === " " || list[at] === "\t" || list[at] === ",")
    ) {
      at++;
    }
  }
  return false;
}
