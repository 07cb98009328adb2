/**
 * What a path names, for `try_files`, `if (-f …)`, `if (-d …)` and the
 * index module, and nginx's lines for a folder without an index file
 * (`ngx_http_index_module`, `ngx_http_core_content_phase`).
 *
 * @module
 */

import type { OsFamily } from "../runtime/mod.ts";
import { currentOsFamily, osErrorOf } from "../runtime/mod.ts";
import type { StaticCache } from "./cache.ts";
import { errorResponse } from "../response/mod.ts";
import type { StaticFailure, StaticResult } from "./static_results.ts";

/**
 * What a path names: a regular `file`, a `directory`, something `other`
 * (a device, a FIFO), nothing (`missing`: nginx's `ENOENT`, `ENOTDIR`,
 * `ENAMETOOLONG`), or a name that could not be looked at (`unreadable`,
 * such as `EACCES` on a folder above it).
 */
export type FileKind =
  | "file"
  | "directory"
  | "other"
  | "missing"
  | "unreadable";

/**
 * Looks at a path with one synchronous `stat` (following links, as nginx's
 * `ngx_open_cached_file` with `test_only`); never throws. With a cache the
 * `stat` is shared by the requests of the same millisecond, and any
 * failure is `missing`.
 *
 * `try_files` tests `$uri` as anything but a directory and `$uri/` as a
 * directory; `-f` is `file`, `-d` is `directory`, `-e` is anything but
 * `missing`/`unreadable`.
 *
 * @param path The absolute path.
 * @param cache Shares the `stat` with the static handler.
 * @returns What it names.
 *
 * @example Usage
 * ```ts
 * import { fileKind } from "./file_kind.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.txt`, "a");
 * strictEqual(fileKind(`${dir}/a.txt`), "file");
 * strictEqual(fileKind(dir), "directory");
 * strictEqual(fileKind(`${dir}/none`), "missing");
 * strictEqual(fileKind(`${dir}/a.txt/x`), "missing");
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function fileKind(path: string, cache?: StaticCache): FileKind {
  if (path.includes("\0")) return "missing";
  let info: Deno.FileInfo | null;
  if (cache !== undefined) {
    info = cache.stat(path);
    if (info === null) return "missing";
  } else {
    try {
      info = Deno.statSync(path);
    } catch (error) {
      return isMissing(error) ? "missing" : "unreadable";
    }
  }
  return info.isFile ? "file" : info.isDirectory ? "directory" : "other";
}

/** nginx's "not there" codes: `ENOENT`, `ENOTDIR`, `ENAMETOOLONG`. */
function isMissing(error: unknown, family = currentOsFamily()): boolean {
  if (
    error instanceof Deno.errors.NotFound ||
    error instanceof Deno.errors.NotADirectory
  ) {
    return true;
  }
  const code = osErrorOf(error, family)?.code;
  return family === "windows"
    ? code === 2 || code === 3 || code === 206
    : code === 2 || code === 20 || code === 36;
}

/**
 * nginx's answer for a folder that has none of the `index` files and no
 * `autoindex`: 403, with `directory index of "/srv/html/dir/" is
 * forbidden` at `error` (`ngx_http_core_content_phase`).
 *
 * @param folder The folder's path, ending in a separator as nginx prints it.
 * @param head A HEAD request.
 * @returns The 403 and its line.
 *
 * @example Usage
 * ```ts
 * import { directoryIndexForbidden } from "./file_kind.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const result = directoryIndexForbidden("/srv/html/dir/", false);
 * strictEqual(result.response.status, 403);
 * strictEqual(result.failure?.message, 'directory index of "/srv/html/dir/" is forbidden');
 * await result.response.body?.cancel();
 * ```
 */
export function directoryIndexForbidden(
  folder: string,
  head: boolean,
): StaticResult {
  return {
    response: errorResponse(403, { head }),
    failure: {
      level: "error",
      message: `directory index of "${folder}" is forbidden`,
    },
  };
}

/**
 * nginx's line for an `index` file that could not be opened
 * (`ngx_http_index_error`): `"/srv/html/dir/index.html" is forbidden` for
 * `EACCES` (the answer is 403), else `… is not found` (404; logged only
 * under `log_not_found`), with the OS error.
 *
 * @param file The index file's path.
 * @param error What opening or testing it threw.
 * @param options `log_not_found`, the platform's texts.
 * @returns The status and the line, `undefined` when nginx logs none.
 *
 * @example Usage
 * ```ts
 * import { indexFailure } from "./file_kind.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(
 *   indexFailure("/srv/html/none/index.html", new Deno.errors.NotFound("(os error 2)"), { logNotFound: true, family: "linux" }),
 *   {
 *     status: 404,
 *     failure: {
 *       level: "error",
 *       message: '"/srv/html/none/index.html" is not found',
 *       osError: { code: 2, text: "No such file or directory" },
 *     },
 *   },
 * );
 * ```
 */
export function indexFailure(
  file: string,
  error: unknown,
  options: { logNotFound: boolean; family?: OsFamily },
): { status: 403 | 404; failure?: StaticFailure } {
  const family = options.family ?? currentOsFamily();
  const osError = osErrorOf(error, family);
  const line = (what: string): StaticFailure => ({
    level: "error",
    message: `"${file}" ${what}`,
    ...(osError ? { osError } : {}),
  });
  const denied = error instanceof Deno.errors.PermissionDenied ||
    osError?.code === (family === "windows" ? 5 : 13);
  if (denied) return { status: 403, failure: line("is forbidden") };
  return options.logNotFound
    ? { status: 404, failure: line("is not found") }
    : { status: 404 };
}
