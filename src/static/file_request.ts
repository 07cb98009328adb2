/**
 * The request `planFile` (`file_plan.ts`) answers a file for, made from a
 * static request's options: the type, whether the gzip or SSI filter takes
 * the whole file, and the header filters to run on the answer's fields
 * before its `Response` is made.
 *
 * @module
 */

import {
  FieldList,
  filterHeaders,
  gzipFromLength,
  gzipTypeMatches,
  hasHeadersFilter,
  type HeadersFilterInput,
} from "../response/mod.ts";
import type { FieldsFilter, FileRequest } from "./file_plan.ts";
import { contentTypeOf } from "./nginx_types.ts";
import type { FileServe } from "./serve_file_options.ts";

/**
 * `gzip_vary`'s field and the headers filter (`expires`, `add_header`) on
 * the fields of the file's answer, before its `Response` is made (see
 * `FieldList`); what the plan answers otherwise is filtered afterwards.
 */
class PlannedFields implements FieldsFilter {
  readonly #ctx: FileServe;

  constructor(ctx: FileServe) {
    this.#ctx = ctx;
  }

  apply(headers: [string, string][], status: number): void {
    const ctx = this.#ctx;
    const { o } = ctx;
    ctx.filtered = true;
    const fields = new FieldList(headers);
    if (ctx.vary && o.gzipVary === true) {
      fields.append("vary", "Accept-Encoding");
    }
    if (!hasHeadersFilter(o.conf)) return;
    const filter: HeadersFilterInput = {
      conf: o.conf,
      vars: o.vars,
      // An error page's status (nginx's r->err_status), as serveFile's.
      status: o.errStatus ?? status,
    };
    if (o.now !== undefined) filter.now = o.now;
    filterHeaders(fields, filter);
  }
}

/**
 * The request `planFile` answers for this static request's file (or its
 * `.gz`).
 *
 * @param ctx The static request.
 * @param ranges Whether ranges may be answered (not for a `.gz`, nor for a
 * subrequest).
 * @returns The file's request.
 */
export function fileRequest(ctx: FileServe, ranges: boolean): FileRequest {
  const { o } = ctx;
  const contentType = contentTypeOf(o.uri, o.conf);
  // The gzip filter takes the whole file where it applies (nginx's gzip
  // header filter clears allow_ranges before the range filter runs).
  const gzipFrom = ranges && o.conf.gzip.enabled
    ? gzipFromLength(
      { conf: o.conf, request: o.vars },
      contentType,
    )
    : null;
  // The SSI filter takes a whole file of a byte or more, as gzip does (its
  // header filter clears allow_ranges unless the length is 0).
  const ssi = o.conf.ssi;
  // One shape, no spreads: made for every file answered.
  return {
    gzipFrom: ssi !== undefined && ranges &&
        gzipTypeMatches(contentType, ssi.types)
      ? 1
      : gzipFrom,
    req: ctx.req,
    root: o.root,
    cache: o.cache,
    family: ctx.family,
    head: ctx.head,
    etag: o.conf.etag,
    // `max_ranges 0`: no range, no Accept-Ranges; gzip as before.
    ranges: ranges && o.conf.maxRanges !== 0,
    contentType,
    oneWrite: o.oneWrite === true,
    asked: o.asked ?? null,
    subrequest: o.subrequest === true,
    hook: o.containmentHook,
    fields: hasHeadersFilter(o.conf) || o.gzipVary === true
      ? new PlannedFields(ctx)
      : null,
  };
}
