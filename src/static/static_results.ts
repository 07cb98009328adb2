/**
 * What a static request produces: the result and its failure line (nginx's
 * `open() … failed` for the OS error), the options, and nginx's validators.
 *
 * @module
 */

import { dirname } from "node:path";
import type { CachePolicy } from "./content_negotiation.ts";
import { errorResponse } from "./error_pages.ts";
import type { OsErrorText, OsFamily } from "../runtime/mod.ts";
import { osErrorOf } from "../runtime/mod.ts";
import { type StaticCache, statOrNull } from "./cache.ts";

/** A failure nginx would log for a static request. */
export interface StaticFailure {
  /** The level. */
  level: "error" | "crit";
  /** e.g. `open() "/srv/html/x.js" failed`. */
  message: string;
  /** The OS error. */
  osError?: OsErrorText;
}

/** What serving a static request produced. */
export interface StaticResult {
  /** The response. */
  response: Response;
  /** A line for the error log, when nginx would write one. */
  failure?: StaticFailure;
}

/** Options for {@linkcode serveStatic}. */
export interface StaticOptions {
  /** The client-app folder, absolute. */
  root: string;
  /** Answers `/` when the root folder does not exist. */
  defaultPage?: (req: Request) => Promise<Response>;
  /**
   * Answer app routes (no extension, or a navigation asking for HTML) that
   * name no file with `/index.html`, as a single-page app needs.
   *
   * @default {true}
   */
  spaFallback?: boolean;
  /**
   * Log missing files as nginx does (`log_not_found on`).
   *
   * @default {true}
   */
  logNotFound?: boolean;
  /** `Cache-Control` values. @default {DEFAULT_CACHE_POLICY} */
  cachePolicy?: CachePolicy;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
  /** Small files served from memory; without it every file is streamed. */
  cache?: StaticCache;
}

/**
 * nginx's strong ETag for a file: `"<mtime seconds hex>-<size hex>"`
 * (`ngx_http_set_etag`).
 *
 * @param info The file's `stat`.
 * @returns The ETag, quoted.
 */
export function etagFor(info: Deno.FileInfo): string {
  const mtime = Math.floor((info.mtime?.getTime() ?? 0) / 1000);
  return `"${mtime.toString(16)}-${info.size.toString(16)}"`;
}

export function notModified(
  req: Request,
  etag: string,
  lastModified: string,
): boolean {
  const inm = req.headers.get("if-none-match");
  if (inm !== null) {
    return inm.split(",").some((t) => {
      const tag = t.trim();
      return tag === "*" || tag === etag || tag === `W/${etag}`;
    });
  }
  // nginx `if_modified_since exact`.
  return req.headers.get("if-modified-since") === lastModified;
}

export function fsFailure(
  error: unknown,
  path: string,
  family: OsFamily,
): StaticResult {
  const call = family === "windows" ? "CreateFile()" : "open()";
  const osError = osErrorOf(error, family);
  const failure = (level: "error" | "crit"): StaticFailure => ({
    level,
    message: `${call} "${path}" failed`,
    ...(osError ? { osError } : {}),
  });
  if (error instanceof Deno.errors.NotFound) {
    return { response: errorResponse(404), failure: failure("error") };
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return { response: errorResponse(403), failure: failure("error") };
  }
  return { response: errorResponse(500), failure: failure("crit") };
}

/**
 * nginx's line for a missing file: `(2: …)`, or on Windows `(3: The system
 * cannot find the path specified)` when the folder is missing too.
 */
export function missingFile(path: string, family: OsFamily): StaticResult {
  const folderMissing = family === "windows" &&
    statOrNull(dirname(path)) === null;
  const code = folderMissing ? 3 : 2;
  return fsFailure(
    new Deno.errors.NotFound(`(os error ${code})`),
    path,
    family,
  );
}

/** A file's `stat` for a request: shared through the cache when there is one. */
export function statFile(
  path: string,
  cache?: StaticCache,
): Deno.FileInfo | null {
  return cache ? cache.stat(path) : statOrNull(path);
}
