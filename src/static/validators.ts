/**
 * nginx's validators of a file (`ETag`, `Last-Modified`), made from its
 * `stat`: a cached file keeps the pair it was read with, so a request for
 * it formats no date.
 *
 * @module
 */

/** A file's `ETag` and `Last-Modified` values. */
export interface Validators {
  /** nginx's strong ETag, quoted (sent under `etag on`). */
  readonly etag: string;
  /** The modification time as an HTTP date. */
  readonly lastModified: string;
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
 * A file's validators, from its `stat`.
 *
 * @param info The file's `stat`.
 * @returns Its `ETag` and `Last-Modified` values.
 *
 * @example Usage
 * ```ts
 * import { validatorsOf } from "./validators.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const info = { size: 2048, mtime: new Date(1764100000000) } as Deno.FileInfo;
 * deepStrictEqual(validatorsOf(info), {
 *   etag: '"692607a0-800"',
 *   lastModified: "Tue, 25 Nov 2025 19:46:40 GMT",
 * });
 * ```
 */
export function validatorsOf(info: Deno.FileInfo): Validators {
  return {
    etag: etagFor(info),
    lastModified: (info.mtime ?? new Date(0)).toUTCString(),
  };
}
