/**
 * The body a client request's locations keep for the internal redirect
 * that may follow (an `error_page`, an upstream's `X-Accel-Redirect`):
 * nginx keeps `r->request_body`, its temporary file too, for the request's
 * life, and a proxied target of the redirect sends it again.
 *
 * It is kept in a field of the request's own flow object, not in a map
 * keyed by the request: a `WeakMap` entry per proxied request kept every
 * recent request's body reachable until a scavenge had looked at its
 * ephemeron table, so each young-generation collection copied about three
 * times the bytes it copies without one (V8's `--trace-gc-nvp`,
 * `new_space_survived`; scripts/README.md).
 *
 * @module
 */

import type { LocationConf } from "../engine/mod.ts";
import type { TempFile } from "./temp_files.ts";
import type { UpstreamCall } from "../upstream/mod.ts";

/** Kept for a body streamed to the upstream: nothing to send again. */
export const STREAMED: unique symbol = Symbol("streamed");

/** A body kept in its temporary file, with the file to close. */
export interface KeptFile {
  /** The body as the forwarding sends it, read by position. */
  body: Extract<UpstreamCall["body"], { kind: "file" }>;
  /** The file, closed once when the request ends. */
  temp: TempFile;
}

/**
 * What a location that may redirect ({@linkcode keepsBody}) kept of the
 * body: its bytes, `null`
 * for none, its temporary file, or {@linkcode STREAMED} when it went
 * upstream as it arrived (`proxy_request_buffering off`: a page after it
 * fails rather than send it empty).
 */
export type KeptBody = Uint8Array | null | KeptFile | typeof STREAMED;

/**
 * Whether a location's answer may be followed by an internal redirect
 * that sends the client's body again, so the body it reads is kept: it
 * has error pages, or it passes to an upstream whose `X-Accel-Redirect`
 * it honours (ngx_http_upstream_process_headers, unless
 * `proxy_ignore_headers` / `fastcgi_ignore_headers` names it). Read from
 * the configuration alone: a location it says no to keeps nothing.
 *
 * @param conf The location.
 * @returns Whether to keep the body.
 */
export function keepsBody(conf: LocationConf): boolean {
  if (conf.errorPages.size > 0) return true;
  const ignored = conf.fastcgi !== undefined
    ? conf.fastcgi.ignoreHeaders
    : conf.proxyPass !== null
    ? conf.proxyIgnoreHeaders
    : null;
  return ignored !== null && !ignored.has("x-accel-redirect");
}

/** Where one client request keeps its body: its flow. */
export interface BodyKeeper {
  /** What was kept; `undefined` until a location that may redirect reads it. */
  keptBody?: KeptBody | undefined;
  /**
   * The body was read, whole or to where its reading failed: its bytes
   * count in `$request_length`. One that came without a declared length
   * (chunked, HTTP/2 without `Content-Length`) has its size as the
   * request's length for every later reader, as nginx sets
   * `headers_in.content_length_n` to what it received
   * (ngx_http_request_body_chunked_filter).
   *
   * @param length The bytes received.
   * @param unended The body was read unbuffered and its reading did not
   * end (see `ProxyOptions.readsUnbuffered`): its bytes count, its length
   * stays unknown.
   */
  bodyRead?(length: number, unended?: boolean): void;
}

/**
 * Closes the temporary file a location that may redirect kept for the
 * request's redirects, once its answer is chosen (nginx's request pool
 * cleanup). A second call, or one for a request that kept no file, does
 * nothing.
 *
 * @param keeper The request's flow.
 *
 * @example A body kept in memory has nothing to close
 * ```ts
 * import { releaseKeptBody } from "./kept_body.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const flow = { keptBody: new Uint8Array([1]) };
 * releaseKeptBody(flow);
 * deepStrictEqual(flow.keptBody, new Uint8Array([1]));
 * ```
 */
export function releaseKeptBody(keeper: BodyKeeper): void {
  const kept = keeper.keptBody;
  if (
    kept === undefined || kept === null || kept === STREAMED ||
    kept instanceof Uint8Array
  ) {
    return;
  }
  keeper.keptBody = undefined;
  kept.temp.close();
}
