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
import { contentTypeFor } from "./media_types.ts";
import { currentOsFamily, type OsFamily } from "../runtime/mod.ts";
import { statOrNull } from "./cache.ts";
import { isSafeSegment } from "./containment.ts";
import { done, planFile, type StaticPlan } from "./file_plan.ts";
import { missingFile, statFile, type StaticOptions } from "./static_results.ts";

export type { StaticPlan } from "./file_plan.ts";

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
  return planFile(
    {
      req,
      root: options.root,
      cache: options.cache,
      family,
      head: ctx.head,
      etag: true,
      ranges: true,
    },
    served,
    headers,
  );
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
