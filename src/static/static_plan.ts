/**
 * The plan for one static request, decided synchronously as named steps:
 * refuse, locate (`try_files`), headers, sidecar, then the file itself
 * (containment, validators, range, memory or stream).
 *
 * @module
 */

import { join } from "node:path";
import {
  acceptsEncoding,
  cacheControlFor,
  DEFAULT_CACHE_POLICY,
  looksLikeAppRoute,
} from "./content_negotiation.ts";
import { errorResponse } from "./error_pages.ts";
import { ifRangeMatches, parseRange } from "./http_ranges.ts";
import { contentTypeFor } from "./media_types.ts";
import { currentOsFamily, type OsFamily } from "../runtime/mod.ts";
import { statOrNull, wholeFileResponse } from "./cache.ts";
import { isSafeSegment, openInsideRoot } from "./containment.ts";
import {
  etagFor,
  fsFailure,
  missingFile,
  notModified,
  statFile,
  type StaticOptions,
  type StaticResult,
} from "./static_results.ts";

/** What {@linkcode planStatic} decided. */
export type StaticPlan =
  | { kind: "done"; result: StaticResult }
  | { kind: "default-page" }
  /** A folder on the file's path changed lately: plan again after `ms`. */
  | { kind: "again"; ms: number }
  | {
    kind: "stream";
    file: Deno.FsFile;
    start: number;
    length: number;
    status: number;
    headers: [string, string][];
  };

/** One static request, as the planning steps share it. */
interface StaticRequest {
  req: Request;
  options: StaticOptions;
  family: OsFamily;
  head: boolean;
}

/** A file found for the request: its path and `stat`. */
interface Located {
  kind: "found";
  path: string;
  info: Deno.FileInfo;
}

function done(result: StaticResult): StaticPlan {
  return { kind: "done", result };
}

/**
 * Everything but streaming, synchronously: a sync `stat` needs no hop to
 * Deno's thread pool, and small files come from the cache.
 */
export function planStatic(
  req: Request,
  route: { segments: string[]; directory: boolean; query?: string },
  options: StaticOptions,
): StaticPlan {
  const family = options.family ?? currentOsFamily();
  const ctx: StaticRequest = {
    req,
    options,
    family,
    head: req.method === "HEAD",
  };
  if (req.method !== "GET" && !ctx.head) {
    return done({
      response: errorResponse(405, { headers: { allow: "GET, HEAD" } }),
    });
  }
  if (!route.segments.every((s) => isSafeSegment(s, family))) {
    return done({ response: errorResponse(404, { head: ctx.head }) });
  }
  const found = locate(ctx, route);
  if (found.kind !== "found") return found;
  const headers = fileHeaders(found.path, options);
  const served = preferSidecar(ctx, found, headers);
  return planFile(ctx, served, headers);
}

/**
 * The file a path names, as nginx's `try_files $uri $uri/ /index.html`: the
 * file, the folder's redirect, the app's `index.html` for an app route, or
 * nginx's 404 (logged when `log_not_found` is on).
 */
function locate(
  ctx: StaticRequest,
  route: { segments: string[]; directory: boolean; query?: string },
): StaticPlan | Located {
  const { req, options, head } = ctx;
  let path = join(options.root, ...route.segments);
  if (route.directory) path = join(path, "index.html");
  let info = statFile(path, options.cache);
  // The root is looked at only when the file is not there: a found file
  // proves the root, and a stat per request is not free.
  if (
    info === null && options.defaultPage &&
    !statOrNull(options.root)?.isDirectory
  ) {
    const isIndex = route.segments.length === 0 ||
      (route.segments.length === 1 && route.segments[0] === "index.html");
    return isIndex
      ? { kind: "default-page" }
      : done({ response: errorResponse(404, { head }) });
  }
  if (info?.isDirectory) {
    // nginx answers a folder without its slash with 301 to the slash.
    // The query from the route, not `new URL(req.url)`: that URL holds the
    // raw Host, and a Host such as `%zz` makes it throw.
    const location = `/${route.segments.map(encodeURIComponent).join("/")}/${
      route.query ?? ""
    }`;
    return done({
      response: errorResponse(301, { head, headers: { location } }),
    });
  }
  if (info === null) {
    const index = join(options.root, "index.html");
    const isAppRoute = (options.spaFallback ?? true) &&
      looksLikeAppRoute(route.segments, req.headers.get("accept"));
    if (!isAppRoute || path === index) {
      const result = missingFile(path, ctx.family);
      if (options.logNotFound === false) delete result.failure;
      if (head) result.response = errorResponse(404, { head });
      return done(result);
    }
    // try_files $uri $uri/ /index.html: an app route gets the app, unlogged.
    path = index;
    info = statFile(path, options.cache);
    if (info === null) return done({ response: errorResponse(404, { head }) });
  }
  return { kind: "found", path, info };
}

/** The headers every answer for the file carries. */
function fileHeaders(path: string, options: StaticOptions): [string, string][] {
  // A plain list, not Headers: Response copies either, and building and
  // iterating a Headers object costs more than the list (profiled).
  return [
    ["content-type", contentTypeFor(path)],
    [
      "cache-control",
      cacheControlFor(path, options.cachePolicy ?? DEFAULT_CACHE_POLICY),
    ],
    ["accept-ranges", "bytes"],
  ];
}

/**
 * Precompressed sidecars (nginx gzip_static, Caddy `precompressed`): the
 * first the client accepts replaces the file; any present adds `Vary`.
 */
function preferSidecar(
  ctx: StaticRequest,
  found: Located,
  headers: [string, string][],
): Located {
  const { cache } = ctx.options;
  const acceptEncoding = ctx.req.headers.get("accept-encoding");
  let served = found;
  for (const [coding, ext] of [["br", ".br"], ["gzip", ".gz"]] as const) {
    const path = found.path + ext;
    const sidecar = cache ? cache.statOptional(path) : statOrNull(path);
    if (sidecar === null || !sidecar.isFile) continue;
    if (!headers.some(([name]) => name === "vary")) {
      headers.push(["vary", "Accept-Encoding"]);
    }
    if (served === found && acceptsEncoding(acceptEncoding, coding)) {
      served = { kind: "found", path, info: sidecar };
      headers.push(["content-encoding", coding]);
    }
  }
  return served;
}

/**
 * The answer for the file to send: containment, the validators (304), the
 * range (206, 416), then the bytes from memory or a stream of the handle.
 */
function planFile(
  ctx: StaticRequest,
  served: Located,
  headers: [string, string][],
): StaticPlan {
  const { req, options, family, head } = ctx;
  const servedPath = served.path;
  let servedInfo = served.info;
  // Containment, decided on what is actually read: a cached copy of this
  // very file (identity of a stat just taken) was proved inside the root
  // when it was read; anything else is opened and proved inside on the
  // handle, whose fstat then describes what is sent (as nginx's
  // ngx_open_cached_file: open, then fstat).
  let cached = options.cache?.lookup(servedPath, servedInfo) ?? null;
  let file: Deno.FsFile | null = null;
  if (cached === null) {
    const opened = openInsideRoot(options.root, servedPath);
    if (opened.kind === "failed") {
      return done(fsFailure(opened.error, servedPath, family));
    }
    if (opened.kind === "unsettled") {
      return { kind: "again", ms: opened.retryInMs };
    }
    if (opened.kind === "outside" || !opened.info.isFile) {
      if (opened.kind === "opened") opened.file.close();
      return done({ response: errorResponse(404, { head }) });
    }
    file = opened.file;
    servedInfo = opened.info;
  }
  const etag = etagFor(servedInfo);
  const lastModified = (servedInfo.mtime ?? new Date(0)).toUTCString();
  headers.push(["etag", etag], ["last-modified", lastModified]);
  if (notModified(req, etag, lastModified)) {
    file?.close();
    return done({ response: new Response(null, { status: 304, headers }) });
  }

  const size = servedInfo.size;
  const range = ifRangeMatches(req.headers.get("if-range"), etag, lastModified)
    ? parseRange(req.headers.get("range"), size)
    : null;
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
  if (head || length === 0) {
    file?.close();
    return done({
      response: new Response(head ? null : "", { status, headers }),
    });
  }
  if (file !== null) {
    try {
      cached = options.cache?.load(servedPath, file, servedInfo) ?? null;
    } catch (error) {
      file.close();
      return done(fsFailure(error, servedPath, family));
    }
    if (cached !== null && cached.bytes.length === size) file.close();
  }
  if (cached !== null && cached.bytes.length === size) {
    // A whole file goes out without a per-response copy (wholeFileResponse).
    return done({
      response: range === null
        ? wholeFileResponse(cached, { status, headers })
        : new Response(cached.bytes.subarray(start, start + length), {
          status,
          headers,
        }),
    });
  }
  if (file === null) {
    // A cached copy of another length cannot happen (the lookup matched the
    // size); answered as a file that changed while read.
    return done({ response: errorResponse(404, { head }) });
  }
  // Too big to cache, or shrank while read: streamed from the same handle,
  // from its start again (fileSlice fails the body rather than send short).
  if (cached !== null) {
    try {
      file.seekSync(0, Deno.SeekMode.Start);
    } catch (error) {
      file.close();
      return done(fsFailure(error, servedPath, family));
    }
  }
  return { kind: "stream", file, start, length, status, headers };
}
