/**
 * What `serveFile` (`serve_file.ts`) is given: the location's settings it
 * reads, the request's file and folder, and the seams; and one request's
 * state on its way through the static module's steps.
 *
 * @module
 */

import type { LocationConf, RequestVars } from "../engine/mod.ts";
import type { OsFamily } from "../runtime/mod.ts";
import type { StaticCache } from "./cache.ts";
import type { ContainmentHook } from "./containment.ts";
import type { AskedFields, StaticFailure } from "./static_results.ts";

/** The location settings `serveFile` reads. */
export type ServeFileConf = Pick<
  LocationConf,
  | "types"
  | "defaultType"
  | "charset"
  | "charsetTypes"
  | "etag"
  | "maxRanges"
  | "gzipStatic"
  | "gzip"
  | "gzipOk"
  | "logNotFound"
  | "addHeaders"
  | "expires"
  | "ssi"
>;

/** Options for `serveFile`. */
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

/** One request on its way through `serveFile`. */
export interface FileServe {
  /** The request. */
  req: Request;
  /** What `serveFile` was given. */
  o: ServeFileOptions;
  /** The platform, for the error lines and the names refused. */
  family: OsFamily;
  /** A HEAD request: answers without a body. */
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
