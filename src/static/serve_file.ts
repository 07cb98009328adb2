/**
 * nginx's static module under a location's settings
 * (`ngx_http_static_handler`, `ngx_http_gzip_static_module`, then the
 * header filters): the file at a path the request flow chose, contained in
 * the location's folder (`root`, or the `alias` folder), with the type,
 * charset, validators, ranges, `gzip_static`, `expires` and `add_header`
 * the location asks for, and nothing it does not ask for (no
 * `Cache-Control`, no charset, no `.gz` unless configured).
 *
 * Dot-files are served as any file, as nginx serves them. Only names that
 * could open something other than a file below the folder are refused, as
 * nginx for Windows refuses them (`static/windows_names.ts`); links leaving
 * the folder are refused on the opened handle (`static/containment.ts`).
 *
 * @module
 */

import type { LocationConf, RequestVars } from "../engine/mod.ts";
import {
  charsetFilter,
  errorResponse,
  FieldList,
  filterHeaders,
  framedInOnePiece,
  gzipAccepted,
  gzipFromLength,
  gzipTypeMatches,
  hasHeadersFilter,
  type HeadersFilterInput,
  isBuiltInError,
  markGzipVary,
  streamedResponse,
} from "../response/mod.ts";
import { currentOsFamily, type OsFamily } from "../runtime/mod.ts";
import { type StaticCache, statOrNull } from "./cache.ts";
import { type ContainmentHook, openInsideRoot } from "./containment.ts";
import {
  done,
  type FieldsFilter,
  type FileRequest,
  planFile,
  type StaticPlan,
} from "./file_plan.ts";
import { directoryIndexForbidden } from "./file_kind.ts";
import { folderRedirect } from "./folder_redirect.ts";
import { fileSlice } from "./file_slice.ts";
import { contentTypeOf } from "./nginx_types.ts";
import {
  type AskedFields,
  fsFailure,
  statFile,
  type StaticFailure,
  type StaticResult,
} from "./static_results.ts";
import { isRefusedWindowsName } from "./windows_names.ts";

/** The location settings {@linkcode serveFile} reads. */
export type ServeFileConf = Pick<
  LocationConf,
  | "types"
  | "defaultType"
  | "charset"
  | "charsetTypes"
  | "etag"
  | "gzipStatic"
  | "gzip"
  | "gzipOk"
  | "logNotFound"
  | "addHeaders"
  | "expires"
  | "ssi"
>;

/** Options for {@linkcode serveFile}. */
export interface ServeFileOptions {
  /** The file, absolute: the document root (or alias folder) and the URI's rest. */
  path: string;
  /** The folder the file must be inside: the location's `root`, or the `alias` folder. */
  root: string;
  /** The location's settings, merged. */
  conf: ServeFileConf;
  /**
   * `$uri` the file is served for: its extension chooses the type (nginx's
   * `r->exten`), and a folder is redirected to it with a `/`. A URI ending
   * in `/` is the index module's (403, `directory index of … is forbidden`).
   */
  uri: string;
  /** The request's variables: `add_header` values, the redirect's host, port and query. */
  vars: RequestVars;
  /**
   * `gzip_vary`: send `Vary: Accept-Encoding` when `gzip_static on` found
   * a `.gz` beside the file.
   *
   * @default {false}
   */
  gzipVary?: boolean;
  /** Small files from memory; without it every file is streamed. */
  cache?: StaticCache;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
  /**
   * The request's clock in ms, read once: for `expires`, and the
   * millisecond whose `stat` of the file the cache shares (requests that
   * arrived in the same millisecond share one). @default {Date.now()}
   */
  now?: number;
  /**
   * The status an error page goes out with (nginx's `r->err_status`): the
   * headers filter sees it instead of the file's 200, unless the page
   * itself fails.
   */
  errStatus?: number;
  /**
   * The answer goes out on a TLS connection over HTTP/1.x: the file's
   * answer is framed to be written in one piece before it is made
   * (`response/tls_one_write.ts`).
   *
   * @default {false}
   */
  oneWrite?: boolean;
  /**
   * `If-None-Match`, `If-Modified-Since`, `Range` and `If-Range` of `req`,
   * when the handler has read them already; else read from `req`.
   *
   * @default {null}
   */
  asked?: AskedFields | null;
  /**
   * An SSI include's subrequest: the client's validators, `Range` and
   * `Accept-Encoding` are the main request's, so no 304, no ranges and
   * `gzip_static on` declines (nginx's `r != r->main` in the not-modified
   * and range filters and `ngx_http_gzip_ok`).
   *
   * @default {false}
   */
  subrequest?: boolean;
  /**
   * A test's seam: called before each system call that opens the file (or
   * its `.gz`) and proves it inside the folder, so a swap can land exactly
   * there (`ContainmentStep`). The gateway passes none.
   */
  containmentHook?: ContainmentHook;
}

/** One request on its way through {@linkcode serveFile}. */
interface FileServe {
  req: Request;
  o: ServeFileOptions;
  family: OsFamily;
  head: boolean;
  /** `gzip_static on` found a `.gz`: the response varies by `Accept-Encoding`. */
  vary: boolean;
  /** The file's mtime in ms, once its `stat` is taken. */
  mtime: number | null;
  /** A line `gzip_static` logged before it declined. */
  failure?: StaticFailure;
  /** The header filters ran on the fields of a planned answer. */
  filtered: boolean;
}

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
 * Serves the file at `options.path` as nginx's static module does under the
 * location's settings: GET and HEAD (POST to a file, and any other method,
 * is 405, as nginx), a folder is a 301 to `$uri/`, a missing file is 404 with
 * nginx's `open() "…" failed (2: …)` line under `log_not_found`, a file
 * that cannot be read 403 with its line; then `expires` and `add_header`
 * on whatever is answered. Synchronous but for the body of a file too
 * large for the cache, which streams.
 *
 * @param req The request.
 * @param options The file, its folder, the location's settings, the request's variables.
 * @returns The response and, where nginx would log one, the line.
 */
export function serveFile(
  req: Request,
  options: ServeFileOptions,
): StaticResult {
  const ctx: FileServe = {
    req,
    o: options,
    family: options.family ?? currentOsFamily(),
    head: req.method === "HEAD",
    vary: false,
    mtime: null,
    filtered: false,
  };
  const plan = planServe(ctx);
  const result = plan.kind === "stream"
    ? { response: streamed(plan) }
    : plan.kind === "done"
    ? plan.result
    // Containment waits for a folder that just changed (settled_proof.ts).
    : { response: errorResponse(404, { head: ctx.head }), retryInMs: plan.ms };
  if (ctx.failure !== undefined && result.failure === undefined) {
    result.failure = ctx.failure;
  }
  const { conf } = options;
  const { response } = result;
  const status = response.status;
  const builtIn = isBuiltInError(response);
  // The file's answer had its fields filtered before it was made.
  const filtered = ctx.filtered && !builtIn;
  if (conf.charset !== null && builtIn) {
    // nginx's own pages pass the charset filter too (not 301 and 302).
    response.headers.set(
      "content-type",
      charsetFilter("text/html", status, conf)!,
    );
  }
  if (ctx.vary && options.gzipVary === true) {
    if (!filtered) response.headers.append("vary", "Accept-Encoding");
    markGzipVary(response);
  }
  if (hasHeadersFilter(conf) && !filtered) {
    const filter: HeadersFilterInput = {
      conf,
      vars: options.vars,
      status: 200,
    };
    if (options.now !== undefined) filter.now = options.now;
    // nginx's range filter answers 416 after the headers filter has seen
    // the 200 (with the file's mtime); the 416 page then passes it again
    // (so `always` fields twice).
    if (status === 416) {
      filterHeaders(response.headers, { ...filter, lastModified: ctx.mtime });
    }
    filter.status = options.errStatus === undefined || builtIn
      ? status
      : options.errStatus;
    filterHeaders(response.headers, filter);
  }
  return result;
}

/** The answer of a file streamed from its handle. */
function streamed(plan: Extract<StaticPlan, { kind: "stream" }>): Response {
  const response = streamedResponse(
    plan.start === 0 && plan.status === 200
      ? plan.file.readable
      : fileSlice(plan.file, plan.start, plan.length),
    { status: plan.status, headers: plan.headers },
  );
  if (plan.framed) framedInOnePiece(response);
  return response;
}

/** The steps of `ngx_http_gzip_static_handler` and `ngx_http_static_handler`. */
function planServe(ctx: FileServe): StaticPlan {
  const { req, o, family, head } = ctx;
  const { conf, path } = o;
  const method = req.method;
  if (method !== "GET" && !head && method !== "POST") {
    return done({ response: errorResponse(405, { head }) });
  }
  if (o.uri.endsWith("/")) {
    // Not a file's URI: nginx's static module declines it, and with no
    // index file found the content phase answers 403 with its line.
    return done(directoryIndexForbidden(path, head));
  }
  if (
    path.includes("\0") ||
    (family === "windows" &&
      isRefusedWindowsName(path.slice(o.root.length)))
  ) {
    // ngx_win32_check_filename answers these as ENOENT.
    return done(openFailed(ctx, new Deno.errors.NotFound("(os error 2)")));
  }
  if (
    conf.gzipStatic !== "off" && method !== "POST" &&
    (conf.gzipStatic === "always" || o.subrequest !== true)
  ) {
    const gz = gzipStatic(ctx);
    if (gz !== null) return gz;
  }
  let info = statFile(path, o.cache, o.now);
  if (info === null) {
    // The stat lost the reason: the open tells it (and a file that appeared
    // meanwhile is served).
    const opened = openInsideRoot(
      o.root,
      path,
      o.containmentHook === undefined ? undefined : { hook: o.containmentHook },
    );
    if (opened.kind === "failed") return done(openFailed(ctx, opened.error));
    if (opened.kind === "unsettled") {
      return { kind: "again", ms: opened.retryInMs };
    }
    if (opened.kind === "outside") {
      return done({ response: errorResponse(404, { head }) });
    }
    opened.file.close();
    info = opened.info;
  }
  if (info.isDirectory) return done(folderRedirect(o.uri, o.vars, head));
  if (!info.isFile) {
    return done({
      response: errorResponse(404, { head }),
      failure: { level: "crit", message: `"${path}" is not a regular file` },
    });
  }
  if (method === "POST") {
    return done({ response: errorResponse(405, { head }) });
  }
  ctx.mtime = info.mtime?.getTime() ?? 0;
  return planFile(
    fileRequest(ctx, o.subrequest !== true),
    { path, info },
    [],
  );
}

function fileRequest(ctx: FileServe, ranges: boolean): FileRequest {
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
    ranges,
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

/**
 * `gzip_static`: the `.gz` beside the file, for a client that takes gzip
 * (`on`) or for any (`always`), typed by the file's own extension; served
 * without ranges, as nginx. `null` declines to the file itself.
 */
function gzipStatic(ctx: FileServe): StaticPlan | null {
  const { o } = ctx;
  const on = o.conf.gzipStatic === "on";
  const ok = !on || gzipAccepted(o.vars, o.conf.gzipOk);
  if (on && !ok && o.gzipVary !== true) return null;
  const path = `${o.path}.gz`;
  const info = o.cache
    ? o.cache.statOptional(path, o.now ?? Date.now())
    : statOrNull(path);
  if (info === null) return null;
  if (on) ctx.vary = true;
  if (!ok || !info.isFile) return null;
  const plan = planFile(fileRequest(ctx, false), { path, info }, [[
    "content-encoding",
    "gzip",
  ]]);
  if (plan.kind === "again") return plan;
  if (plan.kind === "done" && isBuiltInError(plan.result.response)) {
    // The .gz could not be opened (or lies outside the folder): nginx logs
    // all but ENOENT and serves the file itself (gzip_static declines).
    const { response, failure } = plan.result;
    if (response.status !== 404 && failure !== undefined) {
      ctx.failure = failure;
    }
    return null;
  }
  return plan;
}

/** nginx's answer and line for a failed open; a 404 is logged under `log_not_found`. */
function openFailed(ctx: FileServe, error: unknown): StaticResult {
  const result = fsFailure(error, ctx.o.path, ctx.family);
  if (result.response.status === 404 && !ctx.o.conf.logNotFound) {
    delete result.failure;
  }
  if (ctx.head) {
    result.response = errorResponse(result.response.status, { head: true });
  }
  return result;
}
