/**
 * The answer for one file of nginx's static module (`serveFile`):
 * containment on the opened handle, the validators (304), the range (206,
 * 416), then the bytes from memory or a stream of the handle.
 *
 * @module
 */

import { firstLine, type OsFamily } from "../runtime/mod.ts";
import type { StaticCache } from "./cache.ts";
import { templatedByShape, templatedFileResponse } from "./answer_template.ts";
import { type ContainmentHook, openInsideRoot } from "./containment.ts";
import {
  errorResponse,
  framedInOnePiece,
  makeResponse,
  ONE_WRITE_FIELD,
  rememberBody,
} from "../response/mod.ts";
import { ifRangeMatches, parseRange } from "./http_ranges.ts";
import {
  type AskedFields,
  fileCondition,
  fsFailure,
  outsideRoot,
  type StaticResult,
} from "./static_results.ts";
import { validatorsOf } from "./validators.ts";

/** What a plan decided. */
export type StaticPlan =
  | { kind: "done"; result: StaticResult }
  /** A folder on the file's path changed lately: plan again after `ms`. */
  | { kind: "again"; ms: number }
  | {
    kind: "stream";
    file: Deno.FsFile;
    /** The file's path, for a failure's line. */
    path: string;
    start: number;
    length: number;
    status: number;
    headers: [string, string][];
    /** Its fields ask for one write (`ONE_WRITE_FIELD`): mark the response. */
    framed: boolean;
  };

/** One file's request, as {@linkcode planFile} reads it. */
export interface FileRequest {
  /** The request. */
  req: Request;
  /** The folder the file must be inside. */
  root: string;
  /** Small files from memory. */
  cache?: StaticCache | undefined;
  /** The platform's error texts. */
  family: OsFamily;
  /** A HEAD request. */
  head: boolean;
  /** Send an `ETag` and match it (nginx `etag on`). */
  etag: boolean;
  /** Honour `Range` (nginx's `allow_ranges`, which `gzip_static` does not set). */
  ranges: boolean;
  /**
   * The gzip filter will compress (or the SSI filter parse) a whole file
   * of at least this length:
   * such a file is sent whole (no range, no `Accept-Ranges`) and its bytes
   * are handed to the filter; `null` when it will not.
   */
  gzipFrom: number | null;
  /**
   * The `Content-Type` of every answer but 304 (nginx's heads; the range
   * filter adds `Accept-Ranges` to a 200 only).
   */
  contentType: string;
  /**
   * The header filters for an answer of the file (not for an error page
   * the plan makes): applied to its fields before its `Response` is made,
   * so `Deno.serve` sends the head it prepared with it; `null`: none.
   */
  fields: FieldsFilter | null;
  /**
   * The answer goes out on a TLS connection over HTTP/1.x: a body is framed
   * to be written in one piece (`response/tls_one_write.ts`), in the fields
   * the response is made from.
   */
  oneWrite?: boolean;
  /** The request's fields, when already read from `req`; else read from it. */
  asked: AskedFields | null;
  /** An SSI include's: the client's validators are not its own. */
  subrequest: boolean;
  /** A test's seam in the file's open and proof (`ContainmentStep`). */
  hook?: ContainmentHook | undefined;
}

/** The header filters a plan applies to the fields of the file's answer. */
export interface FieldsFilter {
  /**
   * Adds and changes fields for an answer of this status, in place.
   *
   * @param headers The fields the `Response` is to be made from.
   * @param status The answer's status.
   */
  apply(headers: [string, string][], status: number): void;
}

/** A file found for a request: its path and `stat`. */
export interface Located {
  /** The file. */
  path: string;
  /** Its `stat`. */
  info: Deno.FileInfo;
}

/**
 * Wraps a finished result as a plan.
 *
 * @param result The result.
 * @returns The plan.
 */
export function done(result: StaticResult): StaticPlan {
  return { kind: "done", result };
}

/**
 * The answer for the file to send. Containment is decided on what is
 * actually read: a cached copy of this very file (identity of a stat just
 * taken) was proved inside the root when it was read; anything else is
 * opened and proved inside on the handle, whose fstat then describes what
 * is sent (as nginx's ngx_open_cached_file: open, then fstat).
 *
 * @param ctx The request.
 * @param served The file.
 * @param headers The fields every answer for it carries; more are added.
 * @returns The plan.
 */
export function planFile(
  ctx: FileRequest,
  served: Located,
  headers: [string, string][],
): StaticPlan {
  const { req, family, head, cache } = ctx;
  // Fields a caller started with (gzip_static's Content-Encoding).
  const given = headers.length;
  const servedPath = served.path;
  let servedInfo = served.info;
  let cached = cache?.lookup(servedPath, servedInfo, ctx.root) ?? null;
  let file: Deno.FsFile | null = null;
  if (cached === null) {
    const opened = openInsideRoot(
      ctx.root,
      servedPath,
      ctx.hook === undefined ? undefined : ctx,
    );
    if (opened.kind === "failed") {
      return done(fsFailure(opened.error, servedPath, family));
    }
    if (opened.kind === "unsettled") {
      return { kind: "again", ms: opened.retryInMs };
    }
    if (opened.kind === "outside") {
      const refused = outsideRoot(servedPath, family);
      if (head) refused.response = errorResponse(403, { head });
      return done(refused);
    }
    if (!opened.info.isFile) {
      opened.file.close();
      return done({ response: errorResponse(404, { head }) });
    }
    file = opened.file;
    servedInfo = opened.info;
  }
  // A cached copy was read with this very size and mtime: its validators.
  const validators = cached?.validators ?? validatorsOf(servedInfo);
  const etag = ctx.etag ? validators.etag : null;
  const lastModified = validators.lastModified;
  const { asked } = ctx;
  const condition = ctx.subrequest
    ? 200
    : fileCondition(req, etag, lastModified, asked);
  if (condition === 412) {
    file?.close();
    return done({ response: errorResponse(412, { head }) });
  }
  if (condition === 304) {
    file?.close();
    if (etag !== null) headers.push(["etag", etag]);
    headers.push(["last-modified", lastModified]);
    ctx.fields?.apply(headers, 304);
    return done({ response: makeResponse(null, { status: 304, headers }) });
  }

  const size = servedInfo.size;
  const gzipped = ctx.gzipFrom !== null && size >= ctx.gzipFrom;
  const ranges = ctx.ranges && !gzipped;
  // If-Range matters only beside a Range (RFC 9110 §13.1.5).
  const wanted = !ranges ? null : asked === null
    // By its first line where the fields kept it (a copy made by
    // copyFields, runtime/field_lines.ts).
    ? firstLine(req.headers, "range", req.headers.get("range"))
    : asked.range;
  const range = wanted !== null &&
      ifRangeMatches(
        asked === null ? req.headers.get("if-range") : asked.ifRange,
        etag,
        lastModified,
      )
    ? parseRange(wanted, size)
    : null;
  // The whole cached file, with fields no filter adds to: the answer made
  // for the last request of the same shape, before any field is built.
  const shape = range === null && cached !== null &&
      cached.bytes.length === size && !gzipped && ctx.fields === null &&
      given === 0 && !head && size > 0
    ? {
      contentType: ctx.contentType,
      etag: etag !== null,
      ranges,
      framed: ctx.oneWrite === true,
    }
    : null;
  if (shape !== null) {
    const response = templatedByShape(cached!, shape);
    if (response !== null) {
      if (shape.framed) framedInOnePiece(response);
      file?.close();
      return done({ response });
    }
  }
  if (etag !== null) headers.push(["etag", etag]);
  headers.push(["last-modified", lastModified]);
  headers.push(["content-type", ctx.contentType]);
  if (range === "unsatisfiable") {
    file?.close();
    return done({
      response: errorResponse(416, {
        head,
        headers: { "content-range": `bytes */${size}` },
      }),
    });
  }
  const start = range?.start ?? 0;
  const length = range === null ? size : range.end - range.start + 1;
  headers.push(["content-length", String(length)]);
  if (range !== null) {
    headers.push([
      "content-range",
      `bytes ${range.start}-${range.end}/${size}`,
    ]);
  }
  const status = range === null ? 200 : 206;
  if (ranges && status === 200) {
    headers.push(["accept-ranges", "bytes"]);
  }
  ctx.fields?.apply(headers, status);
  // Last, as writeInOnePiece would have added it to the response's fields.
  const framed = ctx.oneWrite === true && !head && length > 0;
  if (framed) headers.push([...ONE_WRITE_FIELD]);
  if (head || length === 0) {
    file?.close();
    return done({
      response: makeResponse(head ? null : "", { status, headers }),
    });
  }
  if (file !== null) {
    try {
      cached = cache?.load(servedPath, file, servedInfo, ctx.root) ?? null;
    } catch (error) {
      file.close();
      return done(fsFailure(error, servedPath, family));
    }
    if (cached !== null && cached.bytes.length === size) file.close();
  }
  if (cached !== null && cached.bytes.length === size) {
    // A whole file goes out without a per-response copy, cloned from the
    // answer made for the last request (answer_template.ts).
    const response = range === null
      ? templatedFileResponse(cached, status, headers, shape)
      : makeResponse(cached.bytes.subarray(start, start + length), {
        status,
        headers,
      });
    if (gzipped) rememberBody(response, cached.bytes);
    if (framed) framedInOnePiece(response);
    return done({ response });
  }
  if (file === null) {
    // A cached copy of another length cannot happen (the lookup matched the
    // size); answered as a file that changed while read.
    return done({ response: errorResponse(404, { head }) });
  }
  // Too big to cache, or shrank while read: streamed from the same handle,
  // from its start again (FileBody cuts the body rather than send it short).
  if (cached !== null) {
    try {
      file.seekSync(0, Deno.SeekMode.Start);
    } catch (error) {
      file.close();
      return done(fsFailure(error, servedPath, family));
    }
  }
  return {
    kind: "stream",
    file,
    path: servedPath,
    start,
    length,
    status,
    headers,
    framed,
  };
}
