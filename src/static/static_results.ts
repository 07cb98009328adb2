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

/**
 * Whether a conditional GET is answered 304: `If-None-Match` naming the
 * ETag (or `*`), else `If-Modified-Since` equal to `Last-Modified`.
 *
 * @param req The request.
 * @param etag The file's ETag, or `null` under `etag off` (only `*` matches).
 * @param lastModified The `Last-Modified` value.
 * @returns Whether to answer 304.
 */
export function notModified(
  req: Request,
  etag: string | null,
  lastModified: string,
): boolean {
  const inm = req.headers.get("if-none-match");
  if (inm !== null) {
    return inm.split(",").some((t) => {
      const tag = t.trim();
      return tag === "*" ||
        (etag !== null && (tag === etag || tag === `W/${etag}`));
    });
  }
  // nginx `if_modified_since exact`.
  return req.headers.get("if-modified-since") === lastModified;
}

/**
 * The OS codes `ngx_http_static_handler` answers 404 (`ENOENT`, `ENOTDIR`,
 * `ENAMETOOLONG`) and 403 (`EACCES`, and with `openat` `EMLINK`, `ELOOP`),
 * by platform; any other failure is 500 at `crit`.
 */
const NOT_FOUND_CODES: Readonly<Record<OsFamily, readonly number[]>> = {
  linux: [2, 20, 36],
  windows: [2, 3, 206],
};
const FORBIDDEN_CODES: Readonly<Record<OsFamily, readonly number[]>> = {
  linux: [13, 31, 40],
  windows: [5],
};

/**
 * What nginx answers and logs when opening a file failed: 404 or 403 at
 * `error`, else 500 at `crit`, with `open() "path" failed (code: text)`
 * (`CreateFile()` on Windows).
 *
 * @param error What the open threw.
 * @param path The file.
 * @param family The platform's texts.
 * @returns The response and its line.
 */
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
  const code = osError?.code ?? -1;
  if (
    error instanceof Deno.errors.NotFound ||
    NOT_FOUND_CODES[family].includes(code)
  ) {
    return { response: errorResponse(404), failure: failure("error") };
  }
  if (
    error instanceof Deno.errors.PermissionDenied ||
    FORBIDDEN_CODES[family].includes(code)
  ) {
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
