/**
 * Serves the client app from its folder: GET and HEAD, `index.html` for
 * directories, nginx validators (`ETag`, `Last-Modified`, 304), and never a
 * byte from outside the root.
 *
 * Containment is by construction: the path arrives as decoded segments from
 * `routeRequest` (dot segments already resolved), and every segment that
 * could name something else on some file system is refused here — `/`, `\`,
 * NUL and control characters, `:` (drive letters, NTFS streams such as
 * `::$DATA`), trailing dots and spaces (Windows strips them), dotfiles, and on
 * Windows 8.3 short names (nginx: `ngx_win32_check_filename`) and DOS device
 * names such as `con` or `nul.txt`. Files are
 * opened per request and closed after, so a redeploy can replace them.
 *
 * @module
 */

import { join } from "node:path";
import type { OsErrorText } from "./error_log.ts";
import { errorResponse } from "./error_pages.ts";
import { contentTypeFor } from "./media_types.ts";
import { currentOsFamily, osErrorText, type OsFamily } from "./os_errors.ts";
import { parseOsErrorCode } from "./upstream_error.ts";

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
  /** @default {currentOsFamily()} */
  family?: OsFamily;
}

/**
 * Tells whether a decoded path segment is safe to use as a file name.
 *
 * @param segment A decoded segment.
 * @param family The platform's rules.
 * @returns Whether it may be served.
 *
 * @example Usage
 * ```ts
 * import { isSafeSegment } from "./static_handler.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isSafeSegment("app.js", "linux"), true);
 * strictEqual(isSafeSegment("index.html::$DATA", "windows"), false);
 * strictEqual(isSafeSegment(".env", "linux"), false);
 * ```
 */
export function isSafeSegment(segment: string, family: OsFamily): boolean {
  if (segment === "" || segment.startsWith(".")) return false;
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f/\\:]/.test(segment)) return false;
  if (/[. ]$/.test(segment)) return false;
  if (family === "windows") {
    if (/~\d/.test(segment)) return false; // 8.3 short names
    // DOS device names open devices, not files, with any extension
    // ("con", "NUL.txt", "com1.js").
    if (/^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i.test(segment)) {
      return false;
    }
    if (/[<>"|?*]/.test(segment)) return false; // invalid in Win32 names
  }
  return true;
}

function etagFor(info: Deno.FileInfo): string {
  // nginx's format: "<mtime seconds hex>-<size hex>" (ngx_http_set_etag).
  const mtime = Math.floor((info.mtime?.getTime() ?? 0) / 1000);
  return `"${mtime.toString(16)}-${info.size.toString(16)}"`;
}

function notModified(
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

function fsFailure(
  error: unknown,
  path: string,
  family: OsFamily,
): StaticResult {
  const code = error instanceof Error
    ? parseOsErrorCode(error.message)
    : undefined;
  const call = family === "windows" ? "CreateFile()" : "open()";
  const osError = code === undefined
    ? undefined
    : { code, text: osErrorText(code, family) };
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

function rootExists(root: string): boolean {
  try {
    return Deno.statSync(root).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Serves one static request.
 *
 * @param req The request.
 * @param route The decoded segments and whether the path ended in `/`.
 * @param options The root folder and fallbacks.
 * @returns The response and, where nginx would log one, a failure line.
 */
export async function serveStatic(
  req: Request,
  route: { segments: string[]; directory: boolean },
  options: StaticOptions,
): Promise<StaticResult> {
  const family = options.family ?? currentOsFamily();
  const head = req.method === "HEAD";
  if (req.method !== "GET" && !head) {
    return {
      response: errorResponse(405, { headers: { allow: "GET, HEAD" } }),
    };
  }
  if (!route.segments.every((s) => isSafeSegment(s, family))) {
    return { response: errorResponse(404, { head }) };
  }
  if (options.defaultPage && !rootExists(options.root)) {
    const isIndex = route.segments.length === 0 ||
      (route.segments.length === 1 && route.segments[0] === "index.html");
    return {
      response: isIndex
        ? await options.defaultPage(req)
        : errorResponse(404, { head }),
    };
  }

  let path = join(options.root, ...route.segments);
  if (route.directory) path = join(path, "index.html");
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    return fsFailure(error, path, family);
  }
  try {
    const info = await file.stat();
    if (info.isDirectory) {
      file.close();
      // nginx answers a directory without its slash with 301 to the slash.
      const q = new URL(req.url).search;
      return {
        response: errorResponse(301, {
          head,
          headers: {
            location: `/${
              route.segments.map(encodeURIComponent).join("/")
            }/${q}`,
          },
        }),
      };
    }
    const etag = etagFor(info);
    const lastModified = (info.mtime ?? new Date(0)).toUTCString();
    const headers = new Headers({
      "content-type": contentTypeFor(path),
      "last-modified": lastModified,
      etag,
    });
    if (notModified(req, etag, lastModified)) {
      file.close();
      return { response: new Response(null, { status: 304, headers }) };
    }
    headers.set("content-length", String(info.size));
    if (head) {
      file.close();
      return { response: new Response(null, { status: 200, headers }) };
    }
    return { response: new Response(file.readable, { status: 200, headers }) };
  } catch (error) {
    file.close();
    return fsFailure(error, path, family);
  }
}
