/**
 * What serving a file produces: the response and its failure line (nginx's
 * `open() … failed` for the OS error), and nginx's validators.
 *
 * @module
 */

import {
  type ConditionalFields,
  errorResponse,
  httpTimeMs,
  isConditional,
  preconditionStatus,
} from "../response/mod.ts";
import type { OsErrorText, OsFamily } from "../runtime/mod.ts";
import { osErrorOf } from "../runtime/mod.ts";
import type { StaticCache } from "./cache.ts";
import type { FileBody } from "./file_slice.ts";
import { statOrNull } from "./sync_fs.ts";

export { etagFor } from "./validators.ts";

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
  /**
   * A folder on the path changed a moment ago: ask again after this many
   * ms (containment waits for it to settle); `response` is the 404 to send
   * when the wait is over.
   */
  retryInMs?: number;
  /**
   * A file streamed after the head: the handler sets its `sink` to the
   * request's log, where a file that ends short is told.
   */
  body?: FileBody;
}

/**
 * The request fields a file's answer depends on, when the handler has read
 * them already (the client's own request, in its one walk over the
 * fields): each `get` is a scan of the fields otherwise.
 */
export interface AskedFields extends ConditionalFields {
  /** `Range`, or `null`. */
  readonly range: string | null;
  /** `If-Range`, or `null`. */
  readonly ifRange: string | null;
}

/**
 * nginx's not-modified filter on a file's 200 (`preconditionStatus`):
 * 304, 412, or 200 to send it.
 *
 * @param req The request.
 * @param etag The file's ETag, or `null` under `etag off` (only `*` matches).
 * @param lastModified The `Last-Modified` value.
 * @param asked The request's fields, when already read from `req`.
 * @returns The status to answer with.
 */
export function fileCondition(
  req: Request,
  etag: string | null,
  lastModified: string,
  asked: AskedFields | null = null,
): 200 | 304 | 412 {
  const fields: ConditionalFields = asked ?? {
    ifNoneMatch: req.headers.get("if-none-match"),
    ifModifiedSince: req.headers.get("if-modified-since"),
    ifMatch: req.headers.get("if-match"),
    ifUnmodifiedSince: req.headers.get("if-unmodified-since"),
  };
  if (!isConditional(fields)) return 200;
  return preconditionStatus(fields, {
    etag,
    lastModifiedMs: httpTimeMs(lastModified),
  });
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
 * The OS error a name refused by containment (`static/containment.ts`) is
 * logged with: `ELOOP` (Windows: 1921, the same class), the error nginx's
 * `disable_symlinks` refuses a link with (`ngx_open_file_wrapper`).
 *
 * @returns A new error of that class.
 */
export function outsideRootError(): Error {
  return new Deno.errors.FilesystemLoop("outside the folder served");
}

/**
 * What the gateway answers for a file or folder whose name leads outside
 * the location's folder: 403 and an `[error]` line naming the call and the
 * path, as nginx's static module answers `ELOOP` under `disable_symlinks`
 * (`ngx_http_static_handler`), on every platform.
 *
 * @param path The file or folder, as named below the folder.
 * @param family The platform's texts.
 * @param call The call the line names (`open()`, or a listing's `opendir()`).
 * @returns The response and its line.
 */
export function outsideRoot(
  path: string,
  family: OsFamily,
  call: string = family === "windows" ? "CreateFile()" : "open()",
): StaticResult {
  const osError = osErrorOf(outsideRootError(), family);
  return {
    response: errorResponse(403),
    failure: {
      level: "error",
      message: `${call} "${path}" failed`,
      ...(osError ? { osError } : {}),
    },
  };
}

/**
 * A file's `stat` for a request: shared through the cache when there is
 * one, within the millisecond of `now` (the request's clock, else read).
 */
export function statFile(
  path: string,
  cache?: StaticCache,
  now?: number,
): Deno.FileInfo | null {
  if (cache === undefined) return statOrNull(path);
  return now === undefined ? cache.stat(path) : cache.stat(path, now);
}
