/**
 * nginx's `error_page 500 502 503 504 /50x.html;`: a status the gateway
 * answers itself is answered with a file from the client-app folder
 * instead of the built-in page. As nginx's internal redirect
 * (`ngx_http_send_error_page`), the page keeps the original status, carries
 * `Content-Type`, `Content-Length` and `ETag` but no `Last-Modified` or
 * `Accept-Ranges` (those are for 200 only), and ignores conditional and
 * range headers. The file goes through the same containment as any static
 * file (`openInsideRoot`) and the same cache.
 *
 * @module
 */

import { makeResponse } from "../response/mod.ts";
import { join } from "node:path";
import { contentTypeFor } from "./media_types.ts";
import { currentOsFamily, type OsFamily } from "../runtime/mod.ts";
import type { StaticCache } from "./cache.ts";
import { type CachedBody, wholeFileResponse } from "./cached_body.ts";
import { statOrNull } from "./sync_fs.ts";
import { isSafeSegment, openInsideRoot } from "./containment.ts";
import { etagFor } from "./validators.ts";

/** Options for {@linkcode errorPageResponse}. */
export interface ErrorPageOptions {
  /** The client-app folder, absolute. */
  root: string;
  /** The page's path below the root, e.g. `/50x.html`. */
  uri: string;
  /** Answer a HEAD request: headers only. */
  head: boolean;
  /** Small files from memory. */
  cache?: StaticCache;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
}

/**
 * The page for a built-in error response, or `null` when the folder holds
 * no such file (or it cannot be read): the built-in page is kept then.
 *
 * @param original The gateway's own error response.
 * @param options Where the page is.
 * @returns The page with the original status and headers, or `null`.
 */
export function errorPageResponse(
  original: Response,
  options: ErrorPageOptions,
): Response | null {
  const family = options.family ?? currentOsFamily();
  const segments = options.uri.split("/").slice(1);
  if (!segments.every((s) => isSafeSegment(s, family))) return null;
  const path = join(options.root, ...segments);
  const info = options.cache ? options.cache.stat(path) : statOrNull(path);
  if (info === null || !info.isFile) return null;
  let body: CachedBody | null =
    options.cache?.lookup(path, info, options.root) ?? null;
  let served = info;
  let stream: ReadableStream<Uint8Array> | null = null;
  if (body === null) {
    const opened = openInsideRoot(options.root, path);
    if (opened.kind !== "opened") return null;
    served = opened.info;
    try {
      body = options.head
        ? null
        : options.cache?.load(path, opened.file, served, options.root) ??
          null;
    } catch {
      opened.file.close();
      return null;
    }
    if (body === null && !options.head) stream = opened.file.readable;
    else opened.file.close();
  }
  const headers = new Headers(original.headers);
  headers.set("content-type", contentTypeFor(path));
  headers.set("content-length", String(served.size));
  headers.set("etag", etagFor(served));
  const init = {
    status: original.status,
    statusText: original.statusText,
    headers,
  };
  if (options.head) return makeResponse(null, init);
  if (body !== null && body.bytes.length === served.size) {
    return wholeFileResponse(body, init);
  }
  return stream === null ? null : makeResponse(stream, init);
}
