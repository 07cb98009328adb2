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
 * nginx for Windows refuses them (`runtime/request_path.ts`); links leaving
 * the folder are refused on the opened handle (`static/containment.ts`).
 *
 * Its options are in `serve_file_options.ts`, the `.gz` of `gzip_static` in
 * `gzip_static.ts`, the request a file is planned for in `file_request.ts`.
 *
 * @module
 */

import {
  charsetFilter,
  errorResponse,
  filterHeaders,
  framedInOnePiece,
  hasHeadersFilter,
  type HeadersFilterInput,
  isBuiltInError,
  markGzipVary,
  streamedResponse,
} from "../response/mod.ts";
import {
  currentOsFamily,
  type OsFamily,
  refusedRequestPath,
} from "../runtime/mod.ts";
import { openInsideRoot } from "./containment.ts";
import { done, planFile, type StaticPlan } from "./file_plan.ts";
import { fileRequest } from "./file_request.ts";
import { directoryIndexForbidden } from "./file_kind.ts";
import { folderRedirect } from "./folder_redirect.ts";
import { FileBody } from "./file_slice.ts";
import { gzipStatic } from "./gzip_static.ts";
import type { FileServe, ServeFileOptions } from "./serve_file_options.ts";
import {
  fsFailure,
  outsideRoot,
  statFile,
  type StaticResult,
} from "./static_results.ts";
import { kernelName } from "./os_names.ts";

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
  const result: StaticResult = plan.kind === "stream"
    ? streamed(plan, ctx.family)
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

/**
 * The answer of a file streamed from its handle, whole or a range: its
 * body tells the request's log when the file ends short
 * ({@linkcode FileBody}; `file.readable` would end the body quietly short,
 * or send past the length when the file grew).
 */
function streamed(
  plan: Extract<StaticPlan, { kind: "stream" }>,
  family: OsFamily,
): StaticResult {
  const body = new FileBody(plan.file, plan.path, plan, family);
  const response = streamedResponse(body.stream, {
    status: plan.status,
    headers: plan.headers,
  });
  if (plan.framed) framedInOnePiece(response);
  return { response, body };
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
  if (refusedRequestPath(path, family, o.root.length)) {
    // ngx_win32_check_filename answers these as ENOENT, before any open:
    // the sidecar's, the stat's and the containment's.
    return done(openFailed(ctx, new Deno.errors.NotFound("(os error 2)")));
  }
  const named = kernelName(path, family);
  if (named !== path) {
    // `..` in an internal URI: what open() makes of the name, not Deno's
    // lexical reading of it; nginx's line keeps the name as it was.
    if (typeof named !== "string") return done(openFailed(ctx, named));
    ctx.o = { ...o, path: named };
    return planServe(ctx);
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
      return done(refusedOutside(ctx));
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

/** A name leading outside the folder: 403 and its line (`outsideRoot`). */
function refusedOutside(ctx: FileServe): StaticResult {
  const result = outsideRoot(ctx.o.path, ctx.family);
  if (ctx.head) result.response = errorResponse(403, { head: true });
  return result;
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
